"""Pass `choose-index-width`: the C integer type of a program's indices, loop counters and size arguments.

An index into an array of `n` elements, a loop counter up to a size, a work-item id and a size argument
must each hold the largest value it can take. 32-bit `int` is faster on GPUs (64-bit integer arithmetic is
emulated there), so it stays wherever it suffices; `long` is chosen where any of these can exceed
`INT_MAX` (2^31 - 1): the number of elements of any array value of the program (every subexpression's
type), and every size. The bound is the value where the size is bound, else the size expression's upper
bound from its variables' ranges (`ArithExpr.max_value`): `SizeVar("N", hi=2**34)` says `N` may need
64 bits. A symbolic size with no upper bound is taken to fit 32 bits, and a call that binds it beyond
(`lift.compile`) generates the kernels again for its sizes. A bound beyond 2^63 - 1 cannot be indexed by
any C integer type and is refused.
"""

from __future__ import annotations

from typing import Iterable, Mapping, Optional

import numpy as np

from lift.errors import LiftSizeError
from lift.ir.nodes import Expr, Node
from lift.opencl_gen.memory import element_count
from lift.types.arith import ArithExpr, Cst
from lift.types.types import ArrayType

INT, LONG = "int", "long"
INT_MAX = 2 ** 31 - 1
LONG_MAX = 2 ** 63 - 1
DTYPES = {INT: np.int32, LONG: np.int64}
"""The host's numpy type of a size argument of each index type."""


def array_lengths(node: Node) -> Iterable[ArithExpr]:
    """The element counts of every array value in a typed program: its parameters' and each subexpression's."""
    return (element_count(n.t) for n in node.subterms() if isinstance(n, Expr) and isinstance(n.t, ArrayType))


def bound(e: ArithExpr, sizes: Mapping[str, int]) -> Optional[int]:
    """The largest value `e` takes at `sizes` (the bound sizes substituted, the free ones at their upper
    bounds), or None where it has no finite upper bound."""
    e = e.substitute({k: Cst(v) for k, v in sizes.items()}) if sizes else e
    hi = e.max_value()
    return hi.value if hi is not None and hi.is_constant else None


def index_type(lengths: Iterable[ArithExpr], sizes: Mapping[str, int], where: str) -> str:
    """`int` unless some length or size may exceed `INT_MAX` (module docstring); `where` names the program in
    the error for a bound beyond 64 bits."""
    largest = max([b for b in (bound(n, sizes) for n in lengths) if b is not None] + list(sizes.values()) + [0])
    if largest > LONG_MAX:
        raise LiftSizeError(f"{where}: an array of {largest} elements cannot be indexed by a 64-bit integer "
                            f"(at most {LONG_MAX})")
    return LONG if largest > INT_MAX else INT
