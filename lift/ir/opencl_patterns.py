"""The OpenCL patterns of Table 2 besides the maps and reductions: `reorder-stride` (coalescing, Section 3.2),
the address-space casts `toGlobal`/`toLocal`/`toPrivate`, and the vector patterns `asVector`, `asScalar` and
`vectorize`.

Each means what a high-level function means (`reorder-stride-s` a permutation, a cast and `asScalar ∘ asVector-n`
the identity), so rewriting into them is provable. The OpenCL maps and reductions live with their high-level twins
in `lift.ir.patterns`.
"""

from __future__ import annotations

from dataclasses import dataclass

from lift.errors import LiftTypeError
from lift.ir.nodes import Expr, FunDecl, Literal
from lift.ir.patterns import OPENCL_LEVEL, Pattern, as_size
from lift.types.arith import ArithExpr
from lift.types.types import ScalarType, VectorType, literal_type


@dataclass(frozen=True, eq=False)
class ReorderStride(Pattern):
    """`reorder-stride-s`: `out[i] = in[i/n + s*(i mod n)]` where `n*s` is the length (Section 3.2).

    After a split, consecutive work-items then read consecutive elements (coalescing).
    """

    s: ArithExpr
    paper = "reorder-stride"
    size_field = "s"
    level = OPENCL_LEVEL
    is_view = True

    def __post_init__(self):
        object.__setattr__(self, "s", as_size(self.s, "ReorderStride"))


class AddressSpaceCast(Pattern):
    """Where the result of `f` is stored; no code of its own (Section 3.2, Local/Global)."""

    funs = ("f",)
    space = ""
    level = OPENCL_LEVEL


@dataclass(frozen=True, eq=False)
class ToGlobal(AddressSpaceCast):
    """`toGlobal(f)`: the result of `f` goes to global memory."""

    f: FunDecl
    paper = "toGlobal"
    space = "global"


@dataclass(frozen=True, eq=False)
class ToLocal(AddressSpaceCast):
    """`toLocal(f)`: the result of `f` goes to the work-group's local memory."""

    f: FunDecl
    paper = "toLocal"
    space = "local"


@dataclass(frozen=True, eq=False)
class ToPrivate(AddressSpaceCast):
    """`toPrivate(f)`: the result of `f` goes to private memory (registers)."""

    f: FunDecl
    paper = "toPrivate"
    space = "private"


@dataclass(frozen=True, eq=False)
class AsVector(Pattern):
    """`asVector-n`: `T[m] -> Tn[m/n]` on the innermost array of scalars (Table 2)."""

    n: int
    paper = "asVector"
    size_field = "n"
    level = OPENCL_LEVEL
    is_view = True

    def __post_init__(self):
        if self.n not in (2, 3, 4, 8, 16):
            raise LiftTypeError(f"AsVector: width must be 2, 3, 4, 8 or 16, got {self.n}")


@dataclass(frozen=True, eq=False)
class AsScalar(Pattern):
    """`asScalar`: `Tn[m] -> T[m*n]` on the innermost array of vectors (Table 2)."""

    paper = "asScalar"
    level = OPENCL_LEVEL
    is_view = True


@dataclass(frozen=True, eq=False)
class Vectorize(Pattern):
    """`vectorize-n(f)`: `f` on vectors of `n` lanes, lane by lane (Table 2). `Vectorize(4, 0.0)` is a literal."""

    n: int
    f: FunDecl
    paper = "vectorize"
    size_field = "n"
    level = OPENCL_LEVEL
    funs = ("f",)

    def __new__(cls, n=None, f=None):
        if isinstance(f, Literal) or (f is not None and not callable(f) and not isinstance(f, Expr)):
            return vector_literal(n, f)
        return super().__new__(cls)

    def __post_init__(self):
        super().__post_init__()
        if self.n not in (2, 3, 4, 8, 16):
            raise LiftTypeError(f"Vectorize: width must be 2, 3, 4, 8 or 16, got {self.n}")

    @property
    def arity(self) -> int:
        return self.f.arity


def vector_literal(n: int, value) -> Literal:
    """The `n`-lane vector with every lane `value` (the paper's `vectorize-4(0)`)."""
    if isinstance(value, Literal):
        t, v = value.t, value.value
    else:
        t, v = literal_type(value), value
    if not isinstance(t, ScalarType):
        raise LiftTypeError(f"Vectorize: only scalar literals vectorise, got {value!r} of type {t}")
    return Literal(v, VectorType(t, n))
