"""Arithmetic on expressions in normal form: sums, products and exact quotients of polynomials.

The normal form is the one `lift.types.arith` describes: a sum of monomials, each a rational coefficient
times atoms raised to integer powers. `+`, `-` and `*` multiply out; `/` divides a monomial by inverting
its powers, and a sum by polynomial division where that is exact, so that `(M*k + M)/(k + 1)` is `M`.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Optional

from lift.types.arith import ONE, ZERO, ArithExpr, FloorDiv, Mod, NotDivisible, Poly, _atom, _make, _norm, _operand_str


def _mono_mul(m1: frozenset, m2: frozenset) -> frozenset:
    if not m1:
        return m2
    if not m2:
        return m1
    powers = dict(m1)
    for atom, p in m2:
        p += powers.get(atom, 0)
        if p:
            powers[atom] = p
        else:
            del powers[atom]
    return frozenset(powers.items())


def _mono_inv(m: frozenset) -> frozenset:
    return frozenset((a, -p) for a, p in m)


def _integral(m: frozenset) -> bool:
    """Whether a monomial has no negative powers, so that it is an integer."""
    for _, p in m:
        if p < 0:
            return False
    return True


def _add_term(acc: dict, mono: frozenset, coeff) -> None:
    coeff += acc.get(mono, 0)
    if coeff:
        acc[mono] = _norm(coeff)
    else:
        del acc[mono]


def _add_terms(acc: dict, terms: dict, k=1) -> dict:
    for mono, coeff in terms.items():
        _add_term(acc, mono, coeff * k)
    return acc


def _add(a: ArithExpr, b: ArithExpr, k=1) -> ArithExpr:
    """`a + k*b`."""
    if not b._terms:
        return a
    if not a._terms:
        return _scale(b, k)
    return _make(_recombine_div_mod(_add_terms(dict(a._terms), b._terms, k)))


def _recombine_div_mod(terms: dict) -> dict:
    """`c*d*(x//d) + c*(x%d)` is `c*x`: an index that views split apart (asScalar ∘ asVector) joins again."""
    for mono, coeff in list(terms.items()):
        if len(mono) != 1 or mono not in terms:
            continue
        [(atom, power)] = mono
        if power != 1 or type(atom) is not Mod or atom._den._const is None:
            continue
        div = frozenset(((_atom(FloorDiv, atom._num, atom._den), 1),))
        if terms.get(div) == coeff * atom._den._const:
            del terms[mono], terms[div]
            terms = _add_terms(terms, atom._num._terms, coeff)
    return terms


def _scale(e: ArithExpr, k) -> ArithExpr:
    if not k:
        return ZERO
    if k == 1:
        return e
    return _make({m: _norm(c * k) for m, c in e._terms.items()})


def _mul(a: ArithExpr, b: ArithExpr) -> ArithExpr:
    if a._const is not None:
        return _scale(b, a._const)
    if b._const is not None:
        return _scale(a, b._const)
    cancelled = _cancel_sum(a, b) if len(b._terms) > 1 else None
    if cancelled is None and len(a._terms) > 1:
        cancelled = _cancel_sum(b, a)
    if cancelled is not None:
        return cancelled
    acc = {}
    for m1, c1 in a._terms.items():
        for m2, c2 in b._terms.items():
            _add_term(acc, _mono_mul(m1, m2), c1 * c2)
    return _make(acc)


def _cancel_sum(a: ArithExpr, s: ArithExpr) -> Optional[ArithExpr]:
    """`a*s` when every monomial of `a` has the sum `s` to a negative power, else None:
    `(N/(M + 1))*(M + 1)` is `N`, not `N*M/(M + 1) + N/(M + 1)`."""
    if not any(type(x) is Poly for m in a._terms for x, _ in m):
        return None
    content, base = _primitive(s)
    if not all(dict(m).get(base, 0) < 0 for m in a._terms):
        return None
    up = frozenset(((base, 1),))
    return _make({_mono_mul(m, up): _norm(c * content) for m, c in a._terms.items()})


def _primitive(s: ArithExpr):
    """`(content, base)` with `s == content*base` and the coefficients of `base` coprime
    integers: the normal form of a sum used as a divisor."""
    coeffs = [Fraction(c) for c in s._terms.values()]
    content = Fraction(math.gcd(*(c.numerator for c in coeffs)), math.lcm(*(c.denominator for c in coeffs)))
    return _norm(content), _scale(s, 1 / content)


def _div(a: ArithExpr, b: ArithExpr) -> ArithExpr:
    """`a/b` as a rational expression, integral or not."""
    c = b._const
    if c is not None:
        if c == 0:
            raise ValueError(f"{a}/0: division by zero")
        return _scale(a, 1 / Fraction(c))
    if len(b._terms) == 1:
        [(mono, coeff)] = b._terms.items()
        return _mul(a, _make({_mono_inv(mono): _norm(1 / Fraction(coeff))}))
    quotient = _polynomial_quotient(a._terms, b._terms)
    if quotient is not None:
        return _make(quotient)
    content, base = _primitive(b)
    down = frozenset(((base, -1),))
    return _make({_mono_mul(m, down): _norm(Fraction(c) / content) for m, c in a._terms.items()})


def _polynomial_quotient(a: dict, b: dict) -> Optional[dict]:
    """`a/b` if the sum `b` divides `a` as polynomials (with no negative powers), else None.

    Multivariate division by a single polynomial in a lexicographic monomial order: the
    remainder is zero exactly when `b` divides `a`, so `(M*k + M)/(k + 1)` is `M`.
    """
    if not all(_integral(m) for m in a) or not all(_integral(m) for m in b):
        return None
    atoms = sorted({x for m in (*a, *b) for x, _ in m}, key=lambda x: (str(x), id(x)))

    def order(mono):
        powers = dict(mono)
        return tuple(powers.get(x, 0) for x in atoms)

    lead = max(b, key=order)
    lead_inv = _mono_inv(lead)
    rest, quotient = dict(a), {}
    while rest:
        top = max(rest, key=order)
        factor = _mono_mul(top, lead_inv)
        if not _integral(factor):
            return None
        coeff = Fraction(rest[top]) / b[lead]
        _add_term(quotient, factor, coeff)
        for m, c in b.items():
            _add_term(rest, _mono_mul(m, factor), -coeff * c)
    return quotient


def _exact_div(a: ArithExpr, b: ArithExpr) -> ArithExpr:
    quotient = _div(a, b)
    if type(quotient._const) is Fraction:
        raise NotDivisible(f"{_operand_str(a)}/{_operand_str(b)} is not an integer")
    return quotient


def _power(e: ArithExpr, p: int) -> ArithExpr:
    result = ONE
    for _ in range(abs(p)):
        result = _mul(result, e)
    return result if p > 0 else _div(ONE, result)
