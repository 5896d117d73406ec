"""Symbolic integer expressions for array lengths and indices, with variable ranges.

Array types carry lengths such as `N/1024` (`split(1024)` of a `float[N]`), and the OpenCL code
generator builds indices such as `(4*i + j)//4` that must become `i` when `0 <= j < 4`. Both are
built thousands of times a second by the rewrite search, so every expression is simplified as it
is built, into one normal form, after the range-aware `arithexpr` library of the Scala Lift:

- a `Poly` is a sum of monomials: a rational coefficient times atoms raised to integer powers,
  possibly negative, so that the exact division `N/M` is `N*M^-1`;
- an atom is a `Var` (an integer with a range `[lo, hi)` whose bounds may be expressions), a
  `FloorDiv` or a `Mod` that the simplifier could not remove, or a sum raised to a negative power.

In this form `(N/1024)*1024 == N` and `2*N == N*2` hold structurally. Expressions are hash-consed:
building an expression equal to a live one returns that object, so equality is identity, and
hashing is O(1).

`/` is exact division, assumed integral (Lift records `N % 1024 == 0` when it splits); `//` and `%`
are floor division and modulo, simplified only where the variable ranges prove it sound.

This module holds the expressions themselves (hash-consing, the classes, construction, `str`); the
arithmetic on normal forms is `lift.types.polynomial`, the range analysis and the proofs that `//` and
`%` rest on are `lift.types.ranges`, and the OpenCL C text of an expression is `lift.opencl_gen.c_arith`.
"""

from __future__ import annotations

import math
import numbers
import operator
import weakref
from fractions import Fraction
from functools import lru_cache
from typing import Mapping, Optional, Union

from lift.errors import LiftSizeError

__all__ = [
    "ArithExpr", "Var", "SizeVar", "Cst", "as_arith", "Poly", "FloorDiv", "Mod",
    "UnboundSize", "NotDivisible", "prove_lt", "prove_le", "prove_nonneg",
]


class UnboundSize(LiftSizeError, KeyError):
    """An expression was evaluated without a value for one of its variables."""

    def __str__(self) -> str:
        return str(self.args[0])


class NotDivisible(LiftSizeError, ValueError):
    """An exact division, such as the `N/1024` of `split(1024)`, is not integral under a binding."""


# Every live expression, by structure, held weakly: building an expression equal to a live one
# returns that object.
_table: dict = {}


class _Entry(weakref.ref):
    """A weak reference to a hash-consed expression that knows its key in `_table`."""

    __slots__ = ("key",)


def _forget(entry: _Entry) -> None:
    if _table.get(entry.key) is entry:
        del _table[entry.key]


def _lookup(key) -> Optional["ArithExpr"]:
    entry = _table.get(key)
    return None if entry is None else entry()


def _intern(key, e: "ArithExpr") -> None:
    entry = _Entry(e, _forget)
    entry.key = key
    _table[key] = entry


_UNIT = frozenset()  # the monomial of a constant term
_UNKNOWN = object()  # a bound not computed yet


class ArithExpr:
    """An immutable integer expression in normal form; see the module docstring.

    Build expressions from `Var`, `SizeVar` and `Cst` with `+ - * / // %`; never instantiate this
    class directly. Equal expressions are the same object, so `==` and `hash` are O(1). `str` is
    Python over the variable names: `eval(str(e), {"N": N, ...})` rebuilds `e`.
    """

    # _terms: {monomial: coefficient}, a monomial being a frozenset of (atom, power) pairs;
    # _const: the value of a constant, else None; _depth: see `_bound`;
    # _str, _free, _min, _max: caches of str(), free_vars() and _bound().
    __slots__ = ("_terms", "_hash", "_const", "_depth", "_str", "_free", "_min", "_max", "__weakref__")

    def _init(self, terms: Optional[dict], hash_: int, const, depth: int) -> None:
        """Set the slots; `terms` None makes an atom, the monomial `1*self`."""
        self._hash = hash_
        self._terms = {frozenset(((self, 1),)): 1} if terms is None else terms
        self._const = const
        self._depth = depth
        self._str = self._free = None
        self._min = self._max = _UNKNOWN

    # --- arithmetic -------------------------------------------------------------------------

    def __add__(self, other):
        other = _operand(other)
        return NotImplemented if other is None else _add(self, other)

    __radd__ = __add__

    def __sub__(self, other):
        other = _operand(other)
        return NotImplemented if other is None else _add(self, other, -1)

    def __rsub__(self, other):
        other = _operand(other)
        return NotImplemented if other is None else _add(other, self, -1)

    def __neg__(self):
        return _scale(self, -1)

    def __mul__(self, other):
        other = _operand(other)
        return NotImplemented if other is None else _mul(self, other)

    __rmul__ = __mul__

    def __truediv__(self, other):
        other = _operand(other)
        return NotImplemented if other is None else _exact_div(self, other)

    def __rtruediv__(self, other):
        other = _operand(other)
        return NotImplemented if other is None else _exact_div(other, self)

    def __floordiv__(self, other):
        other = _operand(other)
        return NotImplemented if other is None else _floordiv(self, other)

    def __rfloordiv__(self, other):
        other = _operand(other)
        return NotImplemented if other is None else _floordiv(other, self)

    def __mod__(self, other):
        other = _operand(other)
        return NotImplemented if other is None else _mod(self, other)

    def __rmod__(self, other):
        other = _operand(other)
        return NotImplemented if other is None else _mod(other, self)

    # --- identity ---------------------------------------------------------------------------

    def __eq__(self, other):
        if isinstance(other, ArithExpr):
            return self is other
        if isinstance(other, numbers.Integral):
            return self._const is not None and self._const == other
        return NotImplemented

    def __hash__(self) -> int:
        return self._hash

    def __bool__(self) -> bool:
        if self._const is None:
            raise TypeError(f"the truth value of {self} is ambiguous: use ==, prove_lt or prove_le")
        return self._const != 0

    @property
    def is_constant(self) -> bool:
        return self._const is not None

    @property
    def value(self) -> int:
        """The value of a constant expression; TypeError for any other."""
        if self._const is None:
            raise TypeError(f"{self} is not a constant")
        if type(self._const) is Fraction:
            raise NotDivisible(f"{self} is not an integer")
        return self._const

    def __int__(self) -> int:
        return self.value

    def __repr__(self) -> str:
        return str(self)

    # --- queries ----------------------------------------------------------------------------

    def eval(self, env: Mapping[str, int]) -> int:
        """The value under `env`, which maps variable names to ints.

        Raises `UnboundSize` for a variable missing from `env` and `NotDivisible` where an exact
        division is not integral. Ranges are assumptions for simplification and are not checked.
        """
        raise TypeError(f"{type(self).__name__} does not define eval")

    @property
    def terms(self) -> Mapping:
        """The normal form: `{monomial: coefficient}`, a monomial being a frozenset of `(atom, power)`
        pairs (the empty one for the constant term); an atom is its own monomial `{(atom, 1)}`."""
        return self._terms

    def free_vars(self) -> frozenset:
        """The variables the expression reads (not those only in the ranges of its variables)."""
        if self._free is None:
            self._free = self._compute_free_vars()
        return self._free

    def substitute(self, mapping: Mapping) -> "ArithExpr":
        """The expression with variables replaced and re-simplified.

        `mapping` keys are Vars or variable names, values ints or ArithExprs. Ranges of the
        remaining variables are kept as they are.
        """
        by_var, by_name = {}, {}
        for key, value in mapping.items():
            if isinstance(key, Var):
                by_var[key] = as_arith(value)
            elif isinstance(key, str):
                by_name[key] = as_arith(value)
            else:
                raise TypeError(f"substitute: keys must be Vars or names, got {key!r}")

        def lookup(var):
            found = by_var.get(var)
            return by_name.get(var._name) if found is None else found

        result = self._substitute(lookup)
        if type(result._const) is Fraction:
            binding = ", ".join(f"{k}={v}" for k, v in mapping.items())
            raise NotDivisible(f"{self} is not an integer for {binding}")
        return result

    def min_value(self) -> Optional["ArithExpr"]:
        """A lower bound from the ranges of the variables, or None if unbounded below.

        The bound eliminates the innermost variables (those whose range depends on others, such
        as `j` in `[0, M)`) and keeps the outer ones symbolic: the minimum of `M - 1 - j` is 0.
        """
        if self._const is not None:
            return self
        lo = _bound(self, 0)
        return lo if lo is None or lo._const is None else _const(math.ceil(lo._const))

    def max_value(self) -> Optional["ArithExpr"]:
        """An upper bound from the ranges of the variables (see `min_value`), or None."""
        if self._const is not None:
            return self
        hi = _bound(self, 1)
        return hi if hi is None or hi._const is None else _const(math.floor(hi._const))

    def is_divisible_by(self, n) -> bool:
        """Whether the expression is provably a multiple of `n`: `self/n` has integer
        coefficients and no negative powers. `(1024*N).is_divisible_by(256)`; not `N/4` by 2."""
        n = as_arith(n)
        if n._const == 0:
            raise ValueError(f"{self} cannot be divisible by 0")
        return _is_integer(_div(self, n))


class Poly(ArithExpr):
    """A sum of monomials with rational coefficients: constants, products and sums alike.

    Built only through the arithmetic, which returns an atom instead of the monomial `1*atom`.
    """

    __slots__ = ()

    def __reduce__(self):
        return _make, (self._terms,)

    def eval(self, env):
        total = 0
        for mono, coeff in self._terms.items():
            for atom, power in mono:
                v = atom.eval(env)
                if power > 0:
                    coeff *= v ** power
                elif v == 0:
                    raise NotDivisible(f"{self} divides by zero for {_binding(self, env)}")
                else:
                    coeff = Fraction(coeff) / v ** -power
            total += coeff
        if type(total) is Fraction:
            if total.denominator != 1:
                raise NotDivisible(f"{self} is not an integer for {_binding(self, env)}")
            return total.numerator
        return total

    def _compute_free_vars(self):
        return frozenset().union(*(a.free_vars() for m in self._terms for a, _ in m))

    def _substitute(self, lookup):
        atoms = {a for m in self._terms for a, _ in m}
        replaced = {a: a._substitute(lookup) for a in atoms}
        if all(replaced[a] is a for a in atoms):
            return self
        total = ZERO
        for mono, coeff in self._terms.items():
            term = _const(coeff)
            for atom, power in mono:
                term = _mul(term, _power(replaced[atom], power))
            total = _add(total, term)
        return total

    def __str__(self) -> str:
        if self._str is None:
            self._str = _sum_str(self._terms)
        return self._str


class Var(ArithExpr):
    """An integer variable in `[lo, hi)`: a size such as `N`, or an index such as a thread id.

    `lo` and `hi` are ints, expressions or None (unbounded); `hi` is exclusive, so an index into
    an array of length `M` is `Var("j", 0, M)`. Two Vars are equal iff name and range are.
    """

    __slots__ = ("_name", "_lo", "_hi", "_last")

    def __new__(cls, name: str, lo: Union[int, ArithExpr, None] = 0, hi: Union[int, ArithExpr, None] = None):
        if not isinstance(name, str) or not name.isidentifier():
            raise ValueError(f"Var: the name must be an identifier, got {name!r}")
        lo = None if lo is None else as_arith(lo)
        hi = None if hi is None else as_arith(hi)
        if lo is not None and hi is not None and lo._const is not None and hi._const is not None \
                and hi._const <= lo._const:
            raise ValueError(f"Var {name}: empty range [{lo}, {hi})")
        key = (Var, name, lo, hi)
        self = _lookup(key)
        if self is None:
            self = object.__new__(cls)
            depth = max((b._depth for b in (lo, hi) if b is not None), default=-1) + 1
            self._init(None, hash(key), None, depth)
            self._name, self._lo, self._hi = name, lo, hi
            self._last = None if hi is None else _add(hi, ONE, -1)
            _intern(key, self)
        return self

    def __reduce__(self):
        return Var, (self._name, self._lo, self._hi)

    @property
    def name(self) -> str:
        return self._name

    @property
    def lo(self) -> Optional[ArithExpr]:
        return self._lo

    @property
    def hi(self) -> Optional[ArithExpr]:
        return self._hi

    def eval(self, env):
        try:
            return operator.index(env[self._name])
        except KeyError:
            bound = ", ".join(sorted(env)) or "nothing"
            raise UnboundSize(f"variable {self._name} is unbound (the binding has {bound})") from None

    def _compute_free_vars(self):
        return frozenset((self,))

    def _substitute(self, lookup):
        found = lookup(self)
        return self if found is None else found

    def __str__(self) -> str:
        return self._name


def SizeVar(name: str, hi: Union[int, ArithExpr, None] = None) -> Var:
    """A size variable, such as the `N` of `float[N]`: an integer in `[1, oo)`, or in `[1, hi)` where an upper
    bound is given (a bound beyond 2^31 - 1 gives 64-bit indices, `lift.opencl_gen.index_width`)."""
    return Var(name, 1, hi)


class _IntegerDivision(ArithExpr):
    """An atom `num op den` that the simplifier could not remove; `op` is `//` or `%`."""

    __slots__ = ("_num", "_den")

    def __reduce__(self):
        return _atom, (type(self), self._num, self._den)

    def eval(self, env):
        den = self._den.eval(env)
        if den == 0:
            raise ValueError(f"{self} divides by zero for {_binding(self, env)}")
        return self._apply(self._num.eval(env), den)

    def _compute_free_vars(self):
        return self._num.free_vars() | self._den.free_vars()

    def _substitute(self, lookup):
        num, den = self._num._substitute(lookup), self._den._substitute(lookup)
        if num is self._num and den is self._den:
            return self
        return (_floordiv if type(self) is FloorDiv else _mod)(num, den)

    @property
    def num(self) -> ArithExpr:
        return self._num

    @property
    def den(self) -> ArithExpr:
        return self._den

    def __str__(self) -> str:
        if self._str is None:
            self._str = f"{_operand_str(self._num)}{self._op}{_operand_str(self._den)}"
        return self._str


class FloorDiv(_IntegerDivision):
    """Floor division `num // den`: C's `/` on the non-negative operands lift generates."""

    __slots__ = ()
    _op = "//"
    _apply = staticmethod(operator.floordiv)


class Mod(_IntegerDivision):
    """Modulo `num % den`: C's `%` on the non-negative operands lift generates."""

    __slots__ = ()
    _op = "%"
    _apply = staticmethod(operator.mod)


# --- construction ---------------------------------------------------------------------------


def _norm(c):
    """A coefficient as an int where it is integral, so that equal coefficients are equal keys."""
    return c.numerator if type(c) is Fraction and c.denominator == 1 else c


def _make(terms: dict) -> ArithExpr:
    """The hash-consed expression of a normalised `{monomial: coefficient}`, which it takes over."""
    if len(terms) == 1:
        [(mono, coeff)] = terms.items()
        if coeff == 1 and len(mono) == 1:
            [(atom, power)] = mono
            if power == 1:
                return atom
        if not mono:
            return _const(coeff)
    elif not terms:
        return ZERO
    key = frozenset(terms.items())
    e = _lookup(key)
    if e is None:
        e = object.__new__(Poly)
        e._init(terms, hash(key), None, _terms_depth(terms))
        _intern(key, e)
    return e


def _terms_depth(terms: dict) -> int:
    depth = -1
    for mono in terms:
        for atom, _ in mono:
            if atom._depth > depth:
                depth = atom._depth
    return depth


def _atom(cls, num: ArithExpr, den: ArithExpr) -> ArithExpr:
    """The hash-consed `FloorDiv` or `Mod` atom, unsimplified."""
    key = (cls, num, den)
    e = _lookup(key)
    if e is None:
        e = object.__new__(cls)
        e._init(None, hash(key), None, max(num._depth, den._depth))
        e._num, e._den = num, den
        _intern(key, e)
    return e


@lru_cache(maxsize=1024)
def _const(c) -> ArithExpr:
    """The constant `c` (an int, or a Fraction inside bounds); recent ones stay cached."""
    c = _norm(c)
    terms = {_UNIT: c} if c else {}
    key = frozenset(terms.items())
    e = _lookup(key)
    if e is None:
        e = object.__new__(Poly)
        e._init(terms, hash(c), c, -1)
        _intern(key, e)
    return e


ZERO = _const(0)
ONE = _const(1)


def Cst(n: int) -> ArithExpr:
    """The constant `n`."""
    if isinstance(n, bool) or not isinstance(n, numbers.Integral):
        raise TypeError(f"Cst: expected an int, got {n!r}")
    return _const(int(n))


def as_arith(x) -> ArithExpr:
    """`x` as an expression: ints (numpy ints too) become constants. Strings are rejected, so
    that every size variable is declared once, with its range, as a `Var` or `SizeVar`."""
    if isinstance(x, ArithExpr):
        return x
    if isinstance(x, str):
        raise TypeError(f"size {x!r} is a string: declare it as SizeVar({x!r})")
    if isinstance(x, bool) or not isinstance(x, numbers.Integral):
        raise TypeError(f"expected an int or an ArithExpr, got {x!r}")
    return _const(int(x))


def _operand(x) -> Optional[ArithExpr]:
    """The other operand of an operator as an expression, or None to return NotImplemented."""
    if isinstance(x, ArithExpr):
        return x
    if type(x) is int:
        return _const(x)
    if isinstance(x, numbers.Integral) and not isinstance(x, bool):
        return _const(int(x))
    return None


# --- printing -------------------------------------------------------------------------------


def term_order(item) -> tuple:
    """The order in which the `(monomial, coefficient)` items of a sum print: constants last, then by name."""
    mono, _ = item
    return not mono, sorted((str(a), -p) for a, p in mono)


def _sum_str(terms: dict) -> str:
    if not terms:
        return "0"
    text = ""
    for mono, coeff in sorted(terms.items(), key=term_order):
        term = _term_str(mono, abs(coeff))
        if not text:
            text = "-" + term if coeff < 0 else term
        else:
            text += (" - " if coeff < 0 else " + ") + term
    return text


def _term_str(mono: frozenset, coeff) -> str:
    """`coeff*mono` for a positive coefficient: `N`, `4*i`, `3*N/4`, `N/(4*M)`, `(i//4)`."""
    coeff = Fraction(coeff)
    factors = sorted(mono, key=lambda ap: str(ap[0]))
    num = [_factor_str(a) for a, p in factors for _ in range(p)]
    den = [_factor_str(a) for a, p in factors for _ in range(-p)]
    if coeff.numerator != 1 or not num:
        num.insert(0, str(coeff.numerator))
    if coeff.denominator != 1:
        den.insert(0, str(coeff.denominator))
    text = "*".join(num)
    if den:
        text += "/" + (den[0] if len(den) == 1 else "(" + "*".join(den) + ")")
    return text


def _factor_str(atom: ArithExpr) -> str:
    return str(atom) if type(atom) is Var else f"({atom})"


def _operand_str(e: ArithExpr) -> str:
    return str(e) if type(e) is Var or (type(e._const) is int and e._const >= 0) else f"({e})"


def _binding(e: ArithExpr, env: Mapping[str, int]) -> str:
    """The part of `env` that `e` reads, as `M=4, N=1000`."""
    names = sorted({v._name for v in e.free_vars()} & env.keys())
    return ", ".join(f"{n}={env[n]}" for n in names)


# The arithmetic (`polynomial`) and the range analysis (`ranges`) build the classes above, which call them
# back: imported after the classes, `lift.types` importing this module before either of them.
from lift.types.polynomial import _add, _div, _exact_div, _mul, _power, _scale  # noqa: E402
from lift.types.ranges import (_bound, _floordiv, _is_integer, _mod, prove_le, prove_lt,  # noqa: E402,F401
                               prove_nonneg)
