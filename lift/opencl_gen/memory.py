"""Memories: the buffers and variables that generated kernels read and write.

Every memory is a flat C array (or a single private variable) of one element C type, in one OpenCL
address space. Its size comes from the type of the value stored in it, times the number of
work-items or work-groups that hold a copy at once (a temporary inside `map-workgroup` needs one slice
per work-group in global memory; inside `map-local`, one per work-item in local memory).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from lift.opencl_gen.c_types import c_type_name
from lift.types.arith import ArithExpr, Cst
from lift.types.types import ArrayType, ScalarType, TupleType, Type, VectorType, element_type

INPUT, OUTPUT, TEMPORARY, LOCAL, PRIVATE = "input", "output", "temporary", "local", "private"
_serials = itertools.count()


@dataclass(eq=False)
class Memory:
    """A buffer (`size` elements of `elem`, in `space`) or, with `scalar_variable`, one private variable."""

    name: str
    space: str
    elem: Type
    size: ArithExpr
    kind: str
    scalar_variable: bool = False
    readonly: bool = False
    serial: int = field(default_factory=lambda: next(_serials))

    @property
    def c_elem(self) -> str:
        return c_type_name(self.elem)

    def __repr__(self) -> str:
        return f"Memory({self.name}, {self.space}, {self.c_elem}[{self.size}])"


def element_count(t: Type) -> ArithExpr:
    """How many elements of `element_type(t)` a value of `t` takes."""
    n = Cst(1)
    while isinstance(t, ArrayType):
        n = n * t.length
        t = t.elem
    return n


def is_storable(t: Type) -> bool:
    """Whether values of `t` can live in a flat buffer (arrays of scalars, vectors or flat tuples)."""
    e = element_type(t)
    if isinstance(e, (ScalarType, VectorType)):
        return True
    return isinstance(e, TupleType) and all(isinstance(c, (ScalarType, VectorType, TupleType)) for c in e.elems)


def output_types(t: Type) -> list:
    """The types of a program's output memories, in order.

    The result's own type when it has a flat layout (or is not a tuple); else, for a tuple with array
    components (a program with several outputs), its components' output types, depth first.
    """
    if is_storable(t) or not isinstance(t, TupleType):
        return [t]
    return [u for e in t.elems for u in output_types(e)]


def element_bytes(elem: Type) -> int:
    """The size in bytes of one element in OpenCL (a `float3` takes the room of a `float4`)."""
    from lift.ir.binding import host_dtype

    if isinstance(elem, VectorType):
        return elem.elem.dtype.itemsize * (4 if elem.width == 3 else elem.width)
    return host_dtype(elem).itemsize


def value_bytes(t: Type, sizes) -> int:
    """The bytes a value of type `t` takes in OpenCL buffers under a size binding: an array its bound length
    times its element's, a tuple holding arrays the sum of its components' buffers, an element
    `element_bytes` (a tuple of scalars is one struct). Raises `UnboundSize` for a length not in `sizes`."""
    if isinstance(t, ArrayType):
        return int(t.length.eval(sizes)) * value_bytes(t.elem, sizes)
    if isinstance(t, TupleType) and any(isinstance(e, (ArrayType, TupleType)) for e in t.elems):
        return sum(value_bytes(e, sizes) for e in t.elems)
    return element_bytes(t)


def memory_bytes(mem: Memory, sizes) -> int:
    """The bytes a memory takes under a size binding."""
    return int(mem.size.eval(sizes)) * element_bytes(mem.elem)


def share_buffers(kernels: list, temporaries: list, sizes) -> dict:
    """Temporaries whose lifetimes (first to last kernel using them) do not overlap share one buffer.

    Returns `{temporary name: (slot, bytes)}`; a slot's buffer is as large as the largest temporary in it.
    A temporary used by no kernel gets no slot.
    """
    lifetime = {}
    for i, k in enumerate(kernels):
        for m in k.buffers:
            if m in temporaries:
                first, _ = lifetime.get(m.name, (i, i))
                lifetime[m.name] = (first, i)
    slots: list = []
    placed = {}
    for m in sorted((m for m in temporaries if m.name in lifetime), key=lambda m: lifetime[m.name]):
        first, last = lifetime[m.name]
        nbytes = memory_bytes(m, sizes)
        for slot, (free_from, size) in enumerate(slots):
            if free_from < first:
                slots[slot] = (last, max(size, nbytes))
                break
        else:
            slot = len(slots)
            slots.append((last, nbytes))
        placed[m.name] = slot
    return {name: (slot, slots[slot][1]) for name, slot in placed.items()}
