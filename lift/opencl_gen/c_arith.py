"""OpenCL C text of size and index expressions (`lift.types.arith`).

`c_arith(e)` is a C integer expression with the value of `e.eval`, for the non-negative operands of `//`
and `%` that lift generates (C's `/` and `%` truncate; on non-negative operands they are floor division
and modulo). An exact division is printed over a common denominator, `(3*N)/4` for `3*N/4`, so that C's
truncating `/` is exact wherever `eval` is integral.

A sum prints its terms outermost first (`nesting_order`): the generator numbers its index variables in the order
it opens their loops, so that the part of an index that a loop does not change is a prefix the C compiler hoists
out of it, and the innermost loop's counter comes last. Printed the other way round (`i_6 + 1024*l_2 + 8192*wg_0`,
by name), PoCL's compiler neither hoists the work-item part nor vectorises the loads of an unrolled loop:
a 1024³ matrix multiplication indexed by group and local ids took 4-6x as long as the same loops indexed
by global ids, and as long once its terms were reordered.
"""

from __future__ import annotations

import math
from fractions import Fraction

from lift.types.arith import ArithExpr, FloorDiv, Mod, Var

_C_OPERATORS = {FloorDiv: "/", Mod: "%"}


def c_arith(e: ArithExpr) -> str:
    """The C text of `e` (see the module docstring)."""
    kind = type(e)
    if kind is Var:
        return e.name
    if kind in _C_OPERATORS:
        return f"({_c_operand(e.num)}{_C_OPERATORS[kind]}{_c_operand(e.den)})"
    return _c_poly(e.terms)


def _c_poly(terms) -> str:
    denominator = 1
    divisors = {}  # atom -> highest negative power, as a positive int
    for mono, coeff in terms.items():
        if type(coeff) is Fraction:
            denominator = math.lcm(denominator, coeff.denominator)
        for atom, power in mono:
            if power < 0:
                divisors[atom] = max(divisors.get(atom, 0), -power)
    if denominator == 1 and not divisors:
        return _c_sum(terms)
    divisor_mono = frozenset(divisors.items())
    numerator = {_times(m, divisors): _integer(c * denominator) for m, c in terms.items()}
    return f"({_c_wrap(_c_sum(numerator))}/{_c_wrap(_c_sum({divisor_mono: denominator}))})"


def _times(mono: frozenset, powers: dict) -> frozenset:
    """The monomial `mono` times the atoms of `powers` raised to their powers."""
    out = dict(mono)
    for atom, p in powers.items():
        p += out.get(atom, 0)
        if p:
            out[atom] = p
        else:
            del out[atom]
    return frozenset(out.items())


def _integer(c):
    return c.numerator if type(c) is Fraction and c.denominator == 1 else c


def _c_sum(terms: dict) -> str:
    """C for a sum with integer coefficients and no negative powers."""
    if not terms:
        return "0"
    text = ""
    for mono, coeff in sorted(terms.items(), key=nesting_order):
        k = abs(coeff)
        factors = [str(k)] if k != 1 or not mono else []
        for atom, p in sorted(mono, key=lambda ap: str(ap[0])):
            factors += [_c_operand(atom)] * p
        term = "*".join(factors)
        if not text:
            text = "-" + term if coeff < 0 else term
        else:
            text += (" - " if coeff < 0 else " + ") + term
    return text


def nesting_order(item) -> tuple:
    """The order in which the `(monomial, coefficient)` items of a sum print (see the module docstring): by the
    innermost variable each depends on (the highest number `n` of a generated name `x_n`; sizes, unnumbered, come
    first), constants last, then by name."""
    mono, _ = item
    serials = [_serial(v.name) for a, _ in mono for v in a.free_vars()]
    return not mono, max(serials, default=-1), sorted((str(a), -p) for a, p in mono)


def _serial(name: str) -> int:
    """The number of a generated name (`i_6`: 6); -1 for another name (a size)."""
    _, _, n = name.rpartition("_")
    return int(n) if n.isdigit() else -1


def _c_operand(e: ArithExpr) -> str:
    return _c_wrap(c_arith(e))


def _c_wrap(text: str) -> str:
    """`text` in parentheses unless it is a name, a non-negative literal or already wrapped."""
    if text.isidentifier() or text.isdigit():
        return text
    if text.startswith("("):
        depth = 0
        for i, ch in enumerate(text):
            depth += (ch == "(") - (ch == ")")
            if depth == 0:
                if i == len(text) - 1:
                    return text
                break
    return f"({text})"
