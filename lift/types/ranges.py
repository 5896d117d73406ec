"""Range analysis of expressions: bounds from the variables' ranges, proofs, and the `//` and `%` they allow.

A `Var` carries a range `[lo, hi)` whose bounds may be expressions. `prove_lt(i, N)` (an index in
bounds) and the simplification of `(4*i + j)//4` to `i` when `0 <= j < 4` both rest on bounding an
expression from the ranges of its variables, one depth of variables at a time (see `_bound`).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Optional

from lift.types.arith import (_UNIT, _UNKNOWN, ONE, ZERO, ArithExpr, FloorDiv, Mod, Poly, Var, _atom, _const, _make,
                              _norm, _terms_depth, as_arith)
from lift.types.polynomial import _add, _add_term, _add_terms, _integral, _mono_inv, _mono_mul, _mul, _power


# --- floor division and modulo --------------------------------------------------------------


def _split_multiples(a: ArithExpr, b: ArithExpr):
    """`(quotient, rest)` term dicts with `a == quotient*b + rest`, `quotient` collecting the terms
    of `a` that are integer multiples of `b` (and, for a constant `b`, the multiples of `b` in a
    non-negative constant term), so that `quotient` is an integer polynomial."""
    quotient, rest = {}, {}
    c = b._const
    if c is not None:
        for mono, k in a._terms.items():
            q = 0
            if type(k) is int and _integral(mono) and (k >= 0 if not mono else k % c == 0):
                q = k // c
                if q:
                    quotient[mono] = q
            r = _norm(k - q * c)
            if r:
                rest[mono] = r
        return quotient, rest
    if len(b._terms) > 1:
        return quotient, dict(a._terms)  # no single term is a multiple of a sum
    [(b_mono, b_coeff)] = b._terms.items()
    b_inv = _mono_inv(b_mono)
    for mono, k in a._terms.items():
        q = _norm(Fraction(k) / b_coeff)
        q_mono = _mono_mul(mono, b_inv)
        if type(q) is int and _integral(q_mono):
            quotient[q_mono] = q
        else:
            rest[mono] = k
    return quotient, rest


def _floordiv(a: ArithExpr, b: ArithExpr) -> ArithExpr:
    """`a // b`, simplified: multiples of `b` are pulled out when the rest is provably
    non-negative, and a rest provably in `[0, b)` is dropped."""
    c = b._const
    if c is not None:
        if c == 0:
            raise ValueError(f"{a}//0: division by zero")
        if a._const is not None:
            return _const(a._const // c)
        if c == 1:
            return a
    if not _positive(b):
        return _atom(FloorDiv, a, b)
    if type(a) is FloorDiv and _positive(a._den):
        return _floordiv(a._num, _mul(a._den, b))
    quotient, rest = _split_multiples(a, b)
    if quotient:
        rest = _make(rest)
        if _nonneg(rest, True):
            return _add(_make(quotient), _floordiv(rest, b))
    elif _nonneg(a, True) and _lt(a, b):
        return ZERO
    return _atom(FloorDiv, a, b)


def _mod(a: ArithExpr, b: ArithExpr) -> ArithExpr:
    """`a % b`, simplified: multiples of `b` are dropped when the rest is provably
    non-negative, and a rest provably in `[0, b)` is the result."""
    c = b._const
    if c is not None:
        if c == 0:
            raise ValueError(f"{a}%0: division by zero")
        if a._const is not None:
            return _const(_norm(a._const % c))
        if c == 1:
            return ZERO
    if not _positive(b):
        return _atom(Mod, a, b)
    quotient, rest = _split_multiples(a, b)
    if quotient:
        rest = _make(rest)
        if not _nonneg(rest, True):
            return _atom(Mod, a, b)
        a = rest
    if _nonneg(a, True) and _lt(a, b):
        return a
    return _atom(Mod, a, b)


# --- ranges ---------------------------------------------------------------------------------
#
# A variable's depth is 0 when its range is constant, else one more than the deepest variable in
# its bounds; an expression's depth is that of its deepest atom (-1 for a constant). Bounds are
# found one depth at a time: `_bound(e, side)` replaces only the deepest atoms by their bounds, so
# `M - 1 - j` with `j` in `[0, M)` has the lower bound `M - 1 - (M - 1) = 0`, where replacing `M`
# by its own bound at the same time would lose the correlation. `side` is 0 for the lower bound,
# 1 for the upper; None stands for unbounded.


def _bound(e: ArithExpr, side: int) -> Optional[ArithExpr]:
    """A bound of `e` without its deepest atoms, cached."""
    bound = e._max if side else e._min
    if bound is _UNKNOWN:
        if type(e) is Poly:
            bound = _terms_bound(e._terms, e._depth, side)
        else:
            bound = _atom_bound(e, e._depth, side)
        if side:
            e._max = bound
        else:
            e._min = bound
    return bound


def _at_depth(e: ArithExpr, d: int, side: int) -> Optional[ArithExpr]:
    """A bound of `e`, whose depth is at most `d`, with no atoms of depth `d` left."""
    return e if e._depth < d else _bound(e, side)


def _terms_bound(terms: dict, d: int, side: int) -> Optional[ArithExpr]:
    acc = {}
    for mono, coeff in terms.items():
        deep = [ap for ap in mono if ap[0]._depth == d]
        if not deep:
            _add_term(acc, mono, coeff)
            continue
        rest = mono.difference(deep)
        factors = _factors_bound(deep, d, side if coeff > 0 else 1 - side)
        if factors is None or (rest and not _nonneg(_make({rest: 1}))):
            return None
        for m, c in factors._terms.items():
            _add_term(acc, _mono_mul(m, rest), c * coeff)
    return _make(acc)


def _factors_bound(factors: list, d: int, side: int) -> Optional[ArithExpr]:
    """A bound of a product of atoms raised to powers."""
    if len(factors) == 1 and factors[0][1] == 1:
        return _atom_bound(factors[0][0], d, side)
    product = ONE
    for atom, p in factors:
        lo = _atom_bound(atom, d, 0)
        if lo is None or not _nonneg(lo if p > 0 else _add(lo, ONE, -1)):
            return None  # a factor that may be negative (or, to a negative power, below 1)
        if (p > 0) == (side == 0):
            factor = _power(lo, p)
        else:
            hi = _atom_bound(atom, d, 1)
            if hi is not None:
                factor = _power(hi, p)
            elif p < 0:
                factor = ZERO  # the lower bound of an unbounded atom to a negative power
            else:
                return None
        product = _mul(product, factor)
    return product


def _atom_bound(atom: ArithExpr, d: int, side: int) -> Optional[ArithExpr]:
    kind = type(atom)
    if kind is Var:
        bound = atom._last if side else atom._lo
        return None if bound is None else _at_depth(bound, d, side)
    if kind is FloorDiv:
        num, den = atom._num, atom._den
        n = _at_depth(num, d, side)
        if den._const is not None and den._const > 0:
            return _floordiv(n, den) if _floorable(n) else None
        n_lo = _at_depth(num, d, 0)
        if n_lo is None or not _nonneg(n_lo) or not _positive(den):
            return None
        if side == 0:
            return ZERO
        d_lo = _at_depth(den, d, 0)
        if n is None or d_lo is None or not (_is_integer(n) and _is_integer(d_lo) and _positive(d_lo)):
            return None
        return _floordiv(n, d_lo)
    if kind is Mod:
        if not _positive(atom._den):
            return None
        return ZERO if side == 0 else _at_depth(_add(atom._den, ONE, -1), d, 1)
    return _at_depth(atom, d, side)  # a sum raised to a negative power


def _is_integer(e: ArithExpr) -> bool:
    """Whether `e` is a polynomial with integer coefficients and no negative powers."""
    return all(type(c) is int and _integral(m) for m, c in e._terms.items())


def _floorable(bound: Optional[ArithExpr]) -> bool:
    """Whether a bound may be floor-divided by a constant: `_floordiv` assumes an integral
    numerator unless it is a constant, which it divides exactly."""
    return bound is not None and (bound._const is not None or _is_integer(bound))


def _nonneg(e: Optional[ArithExpr], integral: bool = False) -> bool:
    """Whether `e >= 0` is provable; `integral` says `e` is an integer, so `e > -1` suffices."""
    while e is not None:
        c = e._const
        if c is not None:
            return c > -1 if integral else c >= 0
        relaxed = _relaxed(e._terms)
        if relaxed is not None and _nonneg(_make(relaxed), integral):
            return True
        e = _bound(e, 0)
    return False


def _relaxed(terms: dict) -> Optional[dict]:
    """A lower bound of `terms` with each `x//c` (c a constant, alone in its term) replaced by
    `x/c` or `(x - c + 1)/c`, whichever bounds it on the side its coefficient needs; None if
    there is none. It keeps `x`, so that `M - 1 - (M - 1)//2 >= 0` is provable, where bounding
    `(M - 1)//2` and `M` separately is not."""
    relaxed = None
    for mono, coeff in terms.items():
        if len(mono) != 1:
            continue
        [(atom, p)] = mono
        c = atom._den._const if type(atom) is FloorDiv else None
        if p != 1 or c is None or c <= 0:
            continue
        if relaxed is None:
            relaxed = dict(terms)
        _add_term(relaxed, mono, -coeff)
        _add_terms(relaxed, atom._num._terms, Fraction(coeff) / c)
        if coeff > 0:
            _add_term(relaxed, _UNIT, Fraction(coeff) * (1 - c) / c)
    return relaxed


def _nonneg_terms(terms: dict) -> bool:
    """`_nonneg` of the integer sum `terms`, without hash-consing it."""
    if not terms:
        return True
    if len(terms) == 1 and _UNIT in terms:
        return terms[_UNIT] > -1
    return _nonneg(_terms_bound(terms, _terms_depth(terms), 0), True)


def _positive(e: ArithExpr) -> bool:
    """Whether the integer `e` is provably at least 1."""
    c = e._const
    if c is not None:
        return c > 0
    terms = dict(e._terms)
    _add_term(terms, _UNIT, -1)
    return _nonneg_terms(terms)


def _lt(a: ArithExpr, b: ArithExpr) -> bool:
    """Whether the integer `a < b` is provable."""
    terms = _add_terms(dict(b._terms), a._terms, -1)
    _add_term(terms, _UNIT, -1)
    return _nonneg_terms(terms)


def prove_nonneg(a) -> bool:
    """True only if `a >= 0` follows from the variable ranges."""
    return _nonneg(as_arith(a), True)


def prove_le(a, b) -> bool:
    """True only if `a <= b` follows from the variable ranges."""
    return _nonneg_terms(_add_terms(dict(as_arith(b)._terms), as_arith(a)._terms, -1))


def prove_lt(a, b) -> bool:
    """True only if `a < b` follows from the variable ranges: an index `a` is in bounds."""
    return _lt(as_arith(a), as_arith(b))
