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
"""

from __future__ import annotations

import re

from lift.ir import patterns as P
from lift.ir.nodes import FunCall, FunDecl, Lambda, Param
from lift.ir.userfun import UserFun
from lift.ir.userfun_body import Binary, Call, Return, Variable

ASSOCIATIVE_BINARY = ("+", "*", "and", "or")
ASSOCIATIVE_CALLS = ("max", "min", "fmax", "fmin")
_C_BODY = re.compile(r"return\s*\(?\s*(?:(\w+)\s*([+*]|&&|\|\|)\s*(\w+)|(\w+)\s*\(\s*(\w+)\s*,\s*(\w+)\s*\))\s*\)?\s*;")


def is_associative(op: FunDecl) -> bool:
    """Whether `op` is known to be associative and commutative (see the module)."""
    if isinstance(op, UserFun):
        return op.associative or _known_userfun(op)
    if isinstance(op, P.Vectorize):
        return is_associative(op.f)
    if isinstance(op, Lambda) and len(op.params) == 2:
        return _forwards(op.body, op.params) or _element_wise(op.body, op.params)
    return False


def _known_userfun(f: UserFun) -> bool:
    if f.arity != 2 or len({f.in_types[0], f.in_types[1], f.out_type}) != 1:
        return False
    params = set(f.param_names)
    body = getattr(f.origin, "body", None)
    if body is not None:
        if len(body) != 1 or not isinstance(body[0], Return):
            return False
        v = body[0].value
        if isinstance(v, Binary) and v.op in ASSOCIATIVE_BINARY:
            operands = (v.left, v.right)
        elif isinstance(v, Call) and v.name in ASSOCIATIVE_CALLS and len(v.args) == 2:
            operands = v.args
        else:
            return False
        return all(isinstance(o, Variable) for o in operands) and {o.name for o in operands} == params
    m = _C_BODY.fullmatch(f.body.strip())
    if m is None:
        return False
    if m.group(1):
        return {m.group(1), m.group(3)} == params
    return m.group(4) in ASSOCIATIVE_CALLS and {m.group(5), m.group(6)} == params


def _forwards(body, params: tuple) -> bool:
    """`f(a, b)` or `f(b, a)` for the lambda's parameters `a, b` and an associative `f`."""
    return (isinstance(body, FunCall) and len(body.args) == 2 and set(body.args) == set(params)
            and all(isinstance(a, Param) for a in body.args) and is_associative(body.f))


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
