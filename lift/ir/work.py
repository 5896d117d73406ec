"""The work of a program: how many times its user functions apply at bound sizes.

What the reference interpreter's time grows with, as sizes grow: `map(f)` over `n` elements applies `f`
`n` times, `reduce(f, z)` folds `n` times, `iterate-k(f)` applies `f` `k` times; views compute nothing.
`lift explore` scales the interpreter's time on a small size of a program by the ratio of the works to
estimate its time at the explored size (`lift.explore.reference`).
"""

from __future__ import annotations

from typing import Mapping, Optional

from lift.ir import patterns as P
from lift.ir.mapper import Mapper
from lift.ir.nodes import Expr, FunCall, FunDecl, Lambda
from lift.ir.opencl_patterns import AddressSpaceCast, Vectorize
from lift.ir.routine import Routine
from lift.ir.typecheck import infer
from lift.ir.userfun import UserFun
from lift.types.types import ArrayType, Type


def work(program: Lambda, sizes: Mapping[str, int]) -> float:
    """User-function applications of `program` with its size variables bound to `sizes`."""
    return _Work(sizes).expr(infer(program).expr.body)


def _length(t: Optional[Type], sizes: Mapping[str, int]) -> int:
    """The length of the array `t` (1 when it is not known to be one)."""
    return int(t.length.eval(sizes)) if isinstance(t, ArrayType) else 1


def _elem(t: Optional[Type]) -> Optional[Type]:
    return t.elem if isinstance(t, ArrayType) else None


class _Work(Mapper):
    """`self(f, arg_types)` is the work of one application of `f` to arguments of `arg_types`."""

    def __init__(self, sizes: Mapping[str, int]):
        self.sizes = sizes

    def expr(self, e: Expr) -> float:
        if not isinstance(e, FunCall):
            return 0.0
        return sum(self.expr(a) for a in e.args) + self(e.f, [a.t for a in e.args])

    def map_default(self, f: FunDecl, arg_types: list) -> float:
        return 0.0

    def map_UserFun(self, f: UserFun, arg_types: list) -> float:
        return 1.0

    def map_Vectorize(self, f: Vectorize, arg_types: list) -> float:
        return 1.0

    def map_Lambda(self, f: Lambda, arg_types: list) -> float:
        return self.expr(f.body)

    def map_Routine(self, f: Routine, arg_types: list) -> float:
        return self.expr(f.lam.body)

    def map_AbstractMap(self, f: P.AbstractMap, arg_types: list) -> float:
        return _length(arg_types[0], self.sizes) * self(f.f, [_elem(arg_types[0])])

    def map_MapSeqSlide(self, f: P.MapSeqSlide, arg_types: list) -> float:
        a = arg_types[0]
        windows = (_length(a, self.sizes) - f.size) // f.step + 1
        return windows * self(f.f, [ArrayType(a.elem, f.size) if isinstance(a, ArrayType) else None])

    def map_Fold(self, f: P.Fold, arg_types: list) -> float:
        return _length(arg_types[0], self.sizes) * self(f.f, [f.init.t, _elem(arg_types[0])])

    def map_Iterate(self, f: P.Iterate, arg_types: list) -> float:
        return int(f.n.eval(self.sizes)) * self(f.f, arg_types)

    map_IterateHost = map_Iterate

    def map_AddressSpaceCast(self, f: AddressSpaceCast, arg_types: list) -> float:
        return self(f.f, arg_types)
