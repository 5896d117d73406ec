"""OpenCL C text of size and index expressions (`lift.types.arith`).

`c_arith(e)` is a C integer expression with the value of `e.eval`, for the non-negative operands of `//`
and `%` that lift generates (C's `/` and `%` truncate; on non-negative operands they are floor division
and modulo). An exact division is printed over a common denominator, `(3*N)/4` for `3*N/4`, so that C's
truncating `/` is exact wherever `eval` is integral.
"""

from __future__ import annotations

import math
from fractions import Fraction

from lift.types.arith import ArithExpr, FloorDiv, Mod, Var, term_order

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
    for mono, coeff in sorted(terms.items(), key=term_order):
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
