"""Lift's data types: scalars, vectors, arrays of symbolic length, and tuples.

Following the paper (Section 3), arrays carry their length in the type, as a size expression
(`lift.types.arith`), so that split and join can be checked and memory can be allocated.
`ArrayType(Float, N)` is `float[N]`; nesting gives 2-D and 3-D data: `ArrayType(ArrayType(Float, M), N)`
is an `N`-array of rows of length `M`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Union

import numpy as np

from lift.types.arith import ArithExpr, as_arith


class Type:
    """Base class of all data types. Types are immutable and compare structurally."""

    __slots__ = ()


_literal_class = None


def literals_are(cls) -> None:
    """Make `t(value)` build `cls(value, t)`: the IR registers its `Literal` node (lift.ir.nodes), so that
    `Float(0.0)` is a literal while this layer imports nothing of the IR."""
    global _literal_class
    _literal_class = cls


def _typed_literal(value, t: Type):
    if _literal_class is None:
        raise TypeError(f"{t}({value!r}) builds an IR literal: import lift.ir.nodes first")
    return _literal_class(value, t)


@dataclass(frozen=True)
class ScalarType(Type):
    """A scalar type: `float`, `double`, `int` or `bool` (OpenCL C names)."""

    name: str

    @property
    def dtype(self) -> np.dtype:
        return np.dtype(_SCALAR_DTYPES[self.name])

    def __call__(self, value) -> "object":
        """`Float(0.0)` is a typed literal (see `literals_are`)."""
        return _typed_literal(value, self)

    def __str__(self) -> str:
        return self.name.capitalize()


Float = ScalarType("float")
Double = ScalarType("double")
Int = ScalarType("int")
Bool = ScalarType("bool")

_SCALAR_DTYPES = {"float": np.float32, "double": np.float64, "int": np.int32, "bool": np.bool_}
VECTOR_WIDTHS = (2, 3, 4, 8, 16)


@dataclass(frozen=True)
class VectorType(Type):
    """An OpenCL vector of `width` scalars, such as `float4` (`VectorType(Float, 4)`)."""

    elem: ScalarType
    width: int

    def __post_init__(self):
        if not isinstance(self.elem, ScalarType):
            raise TypeError(f"VectorType: element must be a scalar type, got {self.elem}")
        if self.width not in VECTOR_WIDTHS:
            raise TypeError(f"VectorType: width must be one of {VECTOR_WIDTHS}, got {self.width}")

    @property
    def dtype(self) -> np.dtype:
        return self.elem.dtype

    def __call__(self, value) -> "object":
        """`VectorType(Float, 4)(0.0)` is a typed literal (see `literals_are`)."""
        return _typed_literal(value, self)

    def __str__(self) -> str:
        return f"{self.elem}{self.width}"


@dataclass(frozen=True)
class TupleType(Type):
    """A tuple of types, such as the `<float, float>` elements of `zip(x, y)`."""

    elems: tuple

    def __init__(self, *elems):
        if len(elems) == 1 and isinstance(elems[0], (tuple, list)):
            elems = tuple(elems[0])
        object.__setattr__(self, "elems", tuple(elems))

    def __str__(self) -> str:
        return "<" + ", ".join(str(t) for t in self.elems) + ">"


def as_type(annotation) -> Optional[Type]:
    """A lift type from a type or an annotation, where tuples and lists of types are tuple types; None if not a
    type."""
    if isinstance(annotation, Type):
        return annotation
    if isinstance(annotation, (tuple, list)):
        elems = [as_type(a) for a in annotation]
        return None if None in elems else TupleType(*elems)
    return None


@dataclass(frozen=True)
class ArrayType(Type):
    """An array of `length` elements of type `elem`; the length is a size expression."""

    elem: Type
    length: ArithExpr

    def __init__(self, elem: Type, length: Union[int, ArithExpr]):
        """`elem` may be written as a Python tuple of types (`ArrayType((Float, Float), N)`), as user functions'
        annotations are: a tuple type."""
        t = as_type(elem)
        if t is None:
            shown = f"({', '.join(map(str, elem))})" if isinstance(elem, (tuple, list)) else repr(elem)
            raise TypeError(f"ArrayType: element must be a type or a tuple of types, got {shown}")
        object.__setattr__(self, "elem", t)
        object.__setattr__(self, "length", as_arith(length))

    def __str__(self) -> str:
        dims = []
        t: Type = self
        while isinstance(t, ArrayType):
            dims.append(str(t.length))
            t = t.elem
        return f"{t}" + "".join(f"[{d}]" for d in dims)


def element_type(t: Type) -> Type:
    """The scalar, vector or tuple type under all the array dimensions of `t` (`t` itself where it is no array)."""
    while isinstance(t, ArrayType):
        t = t.elem
    return t


def is_one_element(t: Type) -> bool:
    """Whether `t` is an array of one element, `[T]_1`: the result of a reduction."""
    return isinstance(t, ArrayType) and t.length == 1


def literal_type(value) -> Type:
    """The type of a Python literal: `float` is `Float`, `int` is `Int`, `bool` is `Bool`."""
    if isinstance(value, (bool, np.bool_)):
        return Bool
    if isinstance(value, (int, np.integer)):
        return Int
    if isinstance(value, np.float64):
        return Double
    if isinstance(value, (float, np.floating)):
        return Float
    raise TypeError(f"no lift type for the literal {value!r}")


def tuple_field(i: int) -> str:
    """The field name of a tuple's `i`-th component, in host records (numpy) and in C structs alike."""
    return f"_{i}"


def bind_type(t: Type, sizes) -> Type:
    """`t` with the size variables of its arrays' lengths replaced by `sizes`."""
    if isinstance(t, ArrayType):
        return ArrayType(bind_type(t.elem, sizes), t.length.substitute(sizes))
    return t
