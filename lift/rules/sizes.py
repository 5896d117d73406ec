"""The sizes a parameterised rule may choose: split factors, strides, partial-reduction chunks.

A factor of a constant length is one of its divisors. A symbolic length (`N`) is resolved through
the size binding given to the engine when there is one; otherwise the choices are the powers of two
up to a bound, and the type checker records the divisibility each choice needs (`N % 1024 == 0`).

A size parameter is an int, or, in a derivation written by hand, a string of a size expression over
the variables of the length it divides (`"N/128"`: chunks that give 128 of them).
"""

from __future__ import annotations

import ast
import math
import operator
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Mapping, Optional

from lift.errors import LiftError
from lift.types.arith import ArithExpr, NotDivisible, UnboundSize, as_arith


@dataclass(frozen=True)
class SizeChoices:
    """The size binding and bound the engine enumerates parameters with."""

    sizes: Mapping[str, int] = field(default_factory=dict)
    max_factor: int = 1 << 12

    def value(self, n: ArithExpr) -> Optional[int]:
        """The integer value of `n`, constant or under the binding; None when unknown or not integral."""
        try:
            return integer(n) if n.is_constant else n.eval(self.sizes)
        except (UnboundSize, NotDivisible):
            return None

    def factors(self, length: ArithExpr) -> list:
        """The candidate factors of `length`, ascending."""
        n = self.value(length)
        return [1 << k for k in range(self.max_factor.bit_length())] if n is None else divisors(n)

    def divides(self, factor, length: ArithExpr) -> bool:
        """Whether the size parameter `factor` may divide `length`: provably, under the binding, or not
        known to fail (a symbolic length, whose divisibility the type checker records)."""
        f = size(factor, length)
        if f is None:
            return False
        n, d = self.value(length), self.value(f)
        if d is None:
            return length.is_divisible_by(f)
        return d >= 1 and (n is None or n % d == 0)


@lru_cache(maxsize=1024)
def divisors(n: int) -> list:
    """The divisors of `n`, ascending."""
    small = [d for d in range(1, math.isqrt(n) + 1) if n % d == 0]
    return tuple(sorted(set(small + [n // d for d in small])))


def size(value, length: ArithExpr) -> Optional[ArithExpr]:
    """A size parameter as an expression: an int, an expression, or a string over the variables of
    `length`; else None."""
    if isinstance(value, ArithExpr) or (isinstance(value, int) and not isinstance(value, bool)):
        return as_arith(value)
    if not isinstance(value, str):
        return None
    names = {v.name: v for v in length.free_vars()}
    try:
        return _size_expr(ast.parse(value, mode="eval").body, names)
    except (SyntaxError, KeyError, TypeError, NotDivisible):
        return None


_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
        ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod}


def _size_expr(node: ast.AST, names: dict) -> ArithExpr:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return as_arith(node.value)
    if isinstance(node, ast.Name):
        return names[node.id]
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        return _OPS[type(node.op)](_size_expr(node.left, names), _size_expr(node.right, names))
    raise TypeError(f"not a size expression: {ast.dump(node)}")


def integer(e: ArithExpr) -> Optional[int]:
    """The value of a constant integral expression, else None (symbolic, or a fraction such as 1/2)."""
    try:
        return e.value if e.is_constant else None
    except NotDivisible:
        return None


def ratio(a, b) -> Optional[int]:
    """`a/b` as an int when it is a constant integer, else None (symbolic, or not a whole number)."""
    try:
        return integer(as_arith(a) / as_arith(b))
    except NotDivisible:
        return None


def bound_length(t, sizes: Mapping[str, int]) -> Optional[int]:
    """The length of the array type `t` under the size binding `sizes`; None where `t` has no length or `sizes`
    does not bind it to an integer."""
    try:
        return int(t.length.eval(dict(sizes)))
    except (AttributeError, LiftError, KeyError, TypeError, ValueError):
        return None
