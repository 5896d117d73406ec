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

    def to_c(self) -> str:
        """An OpenCL C integer expression with the value of `eval`, for non-negative operands of
        `//` and `%`. Exact divisions are printed over a common denominator, so that C's
        truncating `/` is exact wherever `eval` is integral."""
        raise TypeError(f"{type(self).__name__} does not define to_c")


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

    def to_c(self) -> str:
        denominator = 1
        divisors = {}  # atom -> highest negative power, as a positive int
        for mono, coeff in self._terms.items():
            if type(coeff) is Fraction:
                denominator = math.lcm(denominator, coeff.denominator)
            for atom, power in mono:
                if power < 0:
                    divisors[atom] = max(divisors.get(atom, 0), -power)
        if denominator == 1 and not divisors:
            return _c_sum(self._terms)
        divisor_mono = frozenset(divisors.items())
        numerator = {_mono_mul(m, divisor_mono): _norm(c * denominator) for m, c in self._terms.items()}
        return f"({_c_wrap(_c_sum(numerator))}/{_c_wrap(_c_sum({divisor_mono: denominator}))})"


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

    def to_c(self) -> str:
        return self._name


def SizeVar(name: str) -> Var:
    """A size variable, such as the `N` of `float[N]`: an integer in `[1, oo)`."""
    return Var(name, 1, None)


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

    def __str__(self) -> str:
        if self._str is None:
            self._str = f"{_operand_str(self._num)}{self._op}{_operand_str(self._den)}"
        return self._str

    def to_c(self) -> str:
        return f"({_c_operand(self._num)}{self._c_op}{_c_operand(self._den)})"


class FloorDiv(_IntegerDivision):
    """Floor division `num // den`: C's `/` on the non-negative operands lift generates."""

    __slots__ = ()
    _op, _c_op = "//", "/"
    _apply = staticmethod(operator.floordiv)


class Mod(_IntegerDivision):
    """Modulo `num % den`: C's `%` on the non-negative operands lift generates."""

    __slots__ = ()
    _op, _c_op = "%", "%"
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


# --- polynomial arithmetic ------------------------------------------------------------------


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


# --- printing -------------------------------------------------------------------------------


def _term_order(item):
    mono, _ = item
    return not mono, sorted((str(a), -p) for a, p in mono)


def _sum_str(terms: dict) -> str:
    if not terms:
        return "0"
    text = ""
    for mono, coeff in sorted(terms.items(), key=_term_order):
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


def _c_sum(terms: dict) -> str:
    """C for a sum with integer coefficients and no negative powers."""
    if not terms:
        return "0"
    text = ""
    for mono, coeff in sorted(terms.items(), key=_term_order):
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
    return _c_wrap(e.to_c())


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
