"""Accesses: what a view resolves to, one read or write of a scalar, vector or struct (`lift.opencl_gen.views`).

A memory element at an index (`MemAccess`, `width > 1`: a vector of adjacent scalars, `vloadN`/`vstoreN`),
the same read through `pad`'s boundary mode (`ClampedAccess`, with its unclamped form for vector reads away
from the edges), a value not in memory (`ValueAccess`), a vector gathered from scalars that are not adjacent
(`GatherAccess`), an access guarded by a condition (`GuardedAccess`: `pad` with a constant, `take`'s
destination), and one of two accesses as a condition says (`SelectAccess`: `concat`). Each gives a C expression
to read (`read()`) and a C statement to write (`write(value)`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Optional

from lift.errors import LiftCodegenError
from lift.ir.names import fresh_name
from lift.opencl_gen import c_ast as C
from lift.opencl_gen.c_arith import c_arith
from lift.opencl_gen.c_types import c_type_name
from lift.opencl_gen.memory import Memory
from lift.types.arith import ArithExpr, Cst, Var
from lift.types.types import VectorType


@dataclass(frozen=True)
class Access(ABC):
    """One read or write: `read()` is a C expression, `write(value)` a C statement (`lift.opencl_gen.c_ast`).

    `lets` are `(variable, C expression)` definitions the access needs first (a clamped index of `pad`).
    """

    lets: tuple = ()

    @abstractmethod
    def read(self) -> str:
        """The C expression that reads this element."""

    def write(self, value: str) -> C.Stmt:
        raise LiftCodegenError(f"cannot write to {self.read()}: it is not memory")


@dataclass(frozen=True)
class MemAccess(Access):
    """Element `index` of a memory; `width > 1` reads `width` consecutive scalars as one vector.

    `field` selects a component of a memory of structs; where that component is a vector (`field_vector`, a
    vectorised map's tuple of vectors), `index` counts its lanes, so that `asScalar` reads one lane of it.
    """

    mem: Memory = None
    index: ArithExpr = Cst(0)
    width: int = 1
    field: str = ""
    field_vector: Optional[VectorType] = None

    def _lane_pointer(self) -> str:
        scalar = self.mem.elem.elem if isinstance(self.mem.elem, VectorType) else self.mem.elem
        return f"(({self.mem.space} {c_type_name(scalar)}*){self.mem.name})"

    def read(self) -> str:
        m, idx = self.mem, self.index
        if self.field_vector is not None:
            return self._field_read()
        if m.scalar_variable and isinstance(m.elem, VectorType) and self.width == 1:
            return f"((private {c_type_name(m.elem.elem)}*)&{m.name})[{c_arith(idx)}]"
        if m.scalar_variable:
            return m.name + self.field
        if isinstance(m.elem, VectorType):
            if self.width == m.elem.width:
                return f"{m.name}[{c_arith(idx / self.width)}]{self.field}"
            if self.width == 1:
                return f"{self._lane_pointer()}[{c_arith(idx)}]"
            return f"vload{self.width}(0, {self._lane_pointer()} + {c_arith(idx)})"
        if self.width > 1:
            return f"vload{self.width}(0, {m.name} + {c_arith(idx)})"
        return f"{m.name}[{c_arith(idx)}]{self.field}"

    def _field_read(self) -> str:
        """The vector component `field` of a struct, whole or one lane of it."""
        m, n = self.mem, self.field_vector.width
        struct = m.name if m.scalar_variable else f"{m.name}[{c_arith(self.index / n)}]"
        if self.width == n:
            return struct + self.field
        pointer = f"(({m.space} {c_type_name(self.field_vector.elem)}*)&{struct}{self.field})"
        return f"{pointer}[{c_arith(self.index % n)}]"

    def write(self, value: str) -> C.Stmt:
        m, idx = self.mem, self.index
        if m.readonly:
            raise LiftCodegenError(f"cannot write to the input {m.name}")
        whole = isinstance(m.elem, VectorType) and m.elem.width == self.width or self.field_vector is not None
        if self.width > 1 and not whole:
            pointer = self._lane_pointer() if isinstance(m.elem, VectorType) else m.name
            return C.Call(f"vstore{self.width}", (value, "0", f"{pointer} + {c_arith(idx)}"))
        return C.Assign(self.read(), value)


@dataclass(frozen=True)
class ClampedAccess(MemAccess):
    """A memory element read through `pad` with a boundary mode (`index` brought back into range): also the
    `direct` access at the index as it is, valid where `inside` holds, so that adjacent lanes of a vector read
    are one vector load away from the edges (`AsVectorView`). Padded in several dimensions, `row` is the
    access with the outer indices brought back into range (by `lets`) and the innermost as it is, valid where
    `row_inside` (the innermost bounds alone) holds: lanes along a row of a clamped grid need no check of
    the row. `inside_ranges`, `row_ranges`: `inside`, `row_inside` as `(j, n)` pairs, each `0 <= j < n`."""

    direct: Optional[MemAccess] = None
    inside: str = ""
    row: Optional[MemAccess] = None
    row_inside: str = ""
    inside_vars: frozenset = frozenset()
    row_vars: frozenset = frozenset()
    inside_ranges: tuple = ()
    row_ranges: tuple = ()


@dataclass(frozen=True)
class ValueAccess(Access):
    """A value that is not in memory: a literal, or a private expression."""

    text: str = ""

    def read(self) -> str:
        return self.text


@dataclass(frozen=True)
class GatherAccess(Access):
    """A vector assembled from scalars that are not adjacent in memory."""

    parts: tuple = ()
    vtype: Optional[VectorType] = None

    def read(self) -> str:
        return f"({c_type_name(self.vtype)})({', '.join(p.read() for p in self.parts)})"

    def write(self, value: str) -> C.Stmt:
        return C.Block(tuple(p.write(f"({value}).s{k:x}") for k, p in enumerate(self.parts)))


def _names(e: ArithExpr) -> set:
    return {v.name for v in e.free_vars()}


def _affine_in(e: ArithExpr, counter: str) -> bool:
    """Whether `e` reads `counter` only in terms `c * counter` of a constant `c` (not in a product, a division or a
    remainder)."""
    for monomial in e.terms:
        for atom, power in monomial:
            if counter in _names(atom) and not (isinstance(atom, Var) and atom.name == counter
                                                 and power == 1 and len(monomial) == 1):
                return False
    return True


@dataclass(frozen=True)
class GuardedAccess(Access):
    """`inner` where `condition` holds, else `default` (pad with a constant); written only where it holds (the
    destination of a `take`), a vector's `lanes` (of type `vtype`) one by one where it does not. `bounds`: for
    the bounds check of a vector read of a clamped array, the names of the variables `condition` reads (a
    `map-seq-unswitch` may test it once for its iteration), else None; `ranges`: where known, `condition` as
    `(j, n)` pairs, each `0 <= j < n` (`over_loop`)."""

    condition: str = ""
    inner: Optional[Access] = None
    default: str = ""
    lanes: tuple = ()
    bounds: Optional[frozenset] = None
    ranges: tuple = ()
    vtype: Optional[VectorType] = None

    def over_loop(self, counter: str, n: ArithExpr) -> Optional[str]:
        """A condition that holds where `condition` holds at every value `0 .. n - 1` of the loop counter
        `counter`, which it reads: its ranges at the first and the last value, where each index is affine in the
        counter (an affine `j` is in `[0, n)` all along the loop where it is at both ends); else None."""
        if not self.ranges or not n.is_constant or n.value < 1:
            return None
        if any(not _affine_in(j, counter) or counter in _names(size) for j, size in self.ranges):
            return None
        ends = [(j.substitute({counter: k}), size) for k in (0, n.value - 1) for j, size in self.ranges]
        return " && ".join(f"({c_arith(j)} >= 0 && {c_arith(j)} < {c_arith(size)})" for j, size in ends)

    @property
    def drops(self) -> bool:
        """Whether this is the destination of a `take-n` (no `default`): read, it is read below `n` (the length of
        `take-n`'s type), where `condition` holds, so it reads as `inner`."""
        return not self.default

    def read(self) -> str:
        if self.drops:
            return self.inner.read()
        return f"(({self.condition}) ? {self.inner.read()} : {self.default})"

    def write(self, value: str) -> C.Stmt:
        whole = C.Block((self.inner.write(C.assuming(self.condition, value)),), guard=self.condition)
        if not self.lanes:
            return whole
        if value.isidentifier() or self.vtype is None:
            parts = tuple(lane.write(f"({value}).s{k:x}") for k, lane in enumerate(self.lanes))
            return C.Block((whole, C.Block(parts, guard=f"!({self.condition})")))
        computed = fresh_name("lanes")  # once, not once per lane (a user function's call)
        parts = tuple(lane.write(f"{computed}.s{k:x}") for k, lane in enumerate(self.lanes))
        declared = C.Decl(c_type_name(self.vtype), computed, value)
        return C.Block((whole, C.Block((declared,) + parts, guard=f"!({self.condition})")))


@dataclass(frozen=True)
class SelectAccess(Access):
    """`parts[0]` where `condition` holds, else `parts[1]`, read and written (an element of `concat(a, b)`)."""

    condition: str = ""
    parts: tuple = ()

    def read(self) -> str:
        return f"(({self.condition}) ? {self.parts[0].read()} : {self.parts[1].read()})"

    def write(self, value: str) -> C.Stmt:
        return C.Block((C.Block((self.parts[0].write(value),), guard=self.condition),
                        C.Block((self.parts[1].write(value),), guard=f"!({self.condition})")))
