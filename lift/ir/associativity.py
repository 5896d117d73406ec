"""Which operators lift may re-associate: the contract of `reduce` (Table 1) made checkable.

`reduce(f, z)` leaves the order of its applications of `f` to the implementation; that is the meaning
only for an associative and commutative `f: (T, T) -> T` with neutral element `z`. Associativity is not
decidable in general, so lift trusts what it can see:

- a user function declared `userfun(..., associative=True)` (or `UserFun(..., associative=True)`);
- a user function of two parameters of one type whose body is `x + y`, `x * y`, `max(x, y)`, `min(x, y)`
  (`fmax`, `fmin` in C), `x and y`, `x or y` (the operators `a + b` and `a * b` of the DSL are such);
- `vectorize-n(f)` of such an `f`, `λa, b. f(a, b)` (or `f(b, a)`), and the element-wise
  `λa, b. map(λe. f(get-0 e, get-1 e))(zip(a, b))`.

Floating-point `+` and `*` are taken as associative, as the paper does: re-associating changes only
rounding. A `reduce` whose operator is not known to be associative means `reduce-seq` (a fold from the
left): the reference interpreter folds it in order and the rules that split a reduction into partial
reductions do not apply (`lift.rules.reduction`).

`reduce(f, z)` folds from `z` once. A split reduction starts every partial reduction from `z`, and padding
adds more `z`, so it reduces `z` several times: that is the same value for every input exactly when
`f(z, z) = z` (`absorbs_itself`), since then, `f` being associative and commutative, the copies of `z`
combine into one. That holds for a neutral `z` (`+` from 0, `*` from 1) and for `max`, `min` from anything,
and is evaluated by the reference interpreter. Where it fails (`+` from 5), a neutral element `e` of `f`
(`neutral_element`: 0 for `+`, 1 for `*`) takes `z` out of the reduction, `reduce(f, z) = reduce(f, z) ∘
reduce(f, e)` (`reduce-neutral-init`, `lift.rules.reduction`), and the inner reduction splits.

`z` may be a constant tuple (`tuple(-inf, -1)`, argmax's `(value, index)` from nothing): `f(z, z) = z` is then
evaluated on the tuple, component by component. An idempotent operator (`is_idempotent`: `f(a, a) = a`,
`max`, `min`, `and`, `or`) is left unchanged by a repeated element, which lets padding repeat one.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Optional

import numpy as np

from lift.errors import LiftError
from lift.ir import patterns as P
from lift.ir.nodes import Expr, FunCall, FunDecl, Lambda, Literal, Param
from lift.ir.opencl_patterns import Vectorize
from lift.ir.userfun import UserFun
from lift.ir.userfun_body import Binary, Call, Return, Variable
from lift.types.types import ScalarType, Type, VectorType

ASSOCIATIVE_BINARY = ("+", "*", "and", "or")
ASSOCIATIVE_CALLS = ("max", "min", "fmax", "fmin")
IDEMPOTENT = ("max", "min", "fmax", "fmin", "and", "or")
"""The recognised operators with `f(a, a) = a` for every `a`."""
NEUTRAL = {"+": 0, "*": 1, "and": True, "or": False}
"""The neutral element of each recognised operator that has one for every type (`max` and `min` need none:
`f(z, z) = z` holds for any `z`)."""
_C_BODY = re.compile(r"return\s*\(?\s*(?:(\w+)\s*([+*]|&&|\|\|)\s*(\w+)|(\w+)\s*\(\s*(\w+)\s*,\s*(\w+)\s*\))\s*\)?\s*;")
_C_OPERATORS = {"&&": "and", "||": "or"}


def is_associative(op: FunDecl) -> bool:
    """Whether `op` is known to be associative and commutative (see the module)."""
    if isinstance(op, UserFun):
        return op.associative or _operator(op) is not None
    if isinstance(op, Vectorize):
        return is_associative(op.f)
    if isinstance(op, Lambda) and len(op.params) == 2:
        return _forwards(op.body, op.params) or _element_wise(op.body, op.params)
    return False


def absorbs_itself(op: FunDecl, z) -> bool:
    """Whether `op(z, z) = z` for a constant `z` (`constant_parts`), by the reference interpreter: then a reduction of
    an associative `op` from `z` may start any number of partial reductions from `z` (see the module)."""
    parts = constant_parts(z)
    return parts is not None and _absorbs(op, parts)


@lru_cache(maxsize=1024)
def _absorbs(op: FunDecl, parts: tuple) -> bool:
    """`absorbs_itself`, evaluated once per operator and constant (rules ask at every reduction they match)."""
    from lift.ir.interpreter import interpret

    z = constant(parts)
    try:
        got = interpret(Lambda((), FunCall(op, (z, z))))
    except (LiftError, TypeError, ValueError):
        return False
    return is_constant(got, parts)


def constant_parts(z) -> Optional[tuple]:
    """The literals of a constant `z`: `(z,)` for a literal, the components of a tuple of literals
    (`tuple(-inf, -1)`), else None."""
    if isinstance(z, Literal):
        return (z,)
    if isinstance(z, FunCall) and isinstance(z.f, P.Tuple) and all(isinstance(a, Literal) for a in z.args):
        return tuple(z.args)
    return None


def constant(parts: tuple) -> Expr:
    """The constant whose literals are `parts` (the inverse of `constant_parts`)."""
    return parts[0] if len(parts) == 1 else P.Tuple(len(parts))(*parts)


def is_constant(value, parts: tuple) -> bool:
    """Whether the reference interpreter's `value` (a number, a vector, a tuple record) is the constant `parts`."""
    a = np.asarray(value)
    values = tuple(a[name] for name in a.dtype.names) if a.dtype.names else (a,)
    return len(values) == len(parts) and all(
        v.dtype.kind in "fiub" and bool(np.all(v == p.value)) for v, p in zip(values, parts))


def is_idempotent(op: FunDecl) -> bool:
    """Whether `op(a, a) = a` for every `a`: `max`, `min`, `and`, `or` (`operator_of`)."""
    return operator_of(op) in IDEMPOTENT


def neutral_element(op: FunDecl, t: Type) -> Optional[Literal]:
    """The neutral element `e` of `op` (`op(e, x) = x`) of the scalar or vector type `t`, where `op` is a recognised
    operator that has one (`NEUTRAL`), else None."""
    value = NEUTRAL.get(operator_of(op))
    return None if value is None or not isinstance(t, (ScalarType, VectorType)) else Literal(value, t)


def operator_of(op: FunDecl) -> Optional[str]:
    """The operator (`+`, `*`, `max`, ...) that `op` is known to compute, through `vectorize-n` and a lambda that
    passes its parameters on, else None."""
    if isinstance(op, UserFun):
        return _operator(op)
    if isinstance(op, Vectorize):
        return operator_of(op.f)
    if isinstance(op, Lambda) and len(op.params) == 2 and _passes_on(op.body, op.params):
        return operator_of(op.body.f)
    return None


def _operator(f: UserFun) -> Optional[str]:
    if f.arity != 2 or len({f.in_types[0], f.in_types[1], f.out_type}) != 1:
        return None
    params = set(f.param_names)
    body = getattr(f.origin, "body", None)
    if body is not None:
        if len(body) != 1 or not isinstance(body[0], Return):
            return None
        v = body[0].value
        if isinstance(v, Binary) and v.op in ASSOCIATIVE_BINARY:
            operator, operands = v.op, (v.left, v.right)
        elif isinstance(v, Call) and v.name in ASSOCIATIVE_CALLS and len(v.args) == 2:
            operator, operands = v.name, v.args
        else:
            return None
        named = all(isinstance(o, Variable) for o in operands) and {o.name for o in operands} == params
        return operator if named else None
    m = _C_BODY.fullmatch(f.body.strip())
    if m is None:
        return None
    if m.group(1):
        return _C_OPERATORS.get(m.group(2), m.group(2)) if {m.group(1), m.group(3)} == params else None
    return m.group(4) if m.group(4) in ASSOCIATIVE_CALLS and {m.group(5), m.group(6)} == params else None


def _passes_on(body, params: tuple) -> bool:
    return (isinstance(body, FunCall) and len(body.args) == 2 and set(body.args) == set(params)
            and all(isinstance(a, Param) for a in body.args))


def _forwards(body, params: tuple) -> bool:
    """`f(a, b)` or `f(b, a)` for the lambda's parameters `a, b` and an associative `f`."""
    return _passes_on(body, params) and is_associative(body.f)


def _element_wise(body, params: tuple) -> bool:
    """`map(λe. f(get-0 e, get-1 e))(zip(a, b))` for an associative `f`."""
    if not (isinstance(body, FunCall) and isinstance(body.f, P.Map) and len(body.args) == 1):
        return False
    zipped = body.args[0]
    if not (isinstance(zipped, FunCall) and isinstance(zipped.f, P.Zip) and set(zipped.args) == set(params)
            and len(zipped.args) == 2):
        return False
    g = body.f.f
    if not (isinstance(g, Lambda) and len(g.params) == 1 and isinstance(g.body, FunCall) and len(g.body.args) == 2):
        return False
    (e,) = g.params
    parts = g.body.args
    gets = all(isinstance(a, FunCall) and isinstance(a.f, P.Get) and a.args == (e,) for a in parts)
    return gets and {a.f.i for a in parts} == {0, 1} and is_associative(g.body.f)
