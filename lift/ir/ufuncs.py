"""Which functions of a program are numpy ufuncs: the operators the interpreter reduces with one `ufunc.reduce`.

A user function whose whole body is `return x + y` (or `x * y`, `max(x, y)`, `min(x, y)`) on two
parameters of one scalar or vector type, the built-in user functions of the operators `+` and `*`
(`lift.ir.operators`), a `vectorize-n` of one, and a lambda that only passes its parameters on to one,
compute the same values as the ufunc the numpy evaluator would apply (`lift.ir.userfun_numpy`): a reduction
by one of them can be one `ufunc.reduce`, and `reduce(+) ∘ map(*) ∘ zip(a, b)` a contraction
(`lift.ir.contraction`). Each of these ufuncs is associative and commutative, so that only the rounding of
floating-point sums depends on the order, as it does between the reference and a kernel.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from lift.ir import patterns as P
from lift.ir.nodes import FunCall, FunDecl, Lambda, Param, count_uses
from lift.ir.opencl_patterns import Vectorize
from lift.ir.userfun import UserFun
from lift.ir.userfun_body import Binary, Call, Return, Variable
from lift.types.types import ScalarType, VectorType

_BINARY = {"+": np.add, "*": np.multiply}
_CALLS = {"max": np.fmax, "min": np.fmin}  # the numpy evaluator's `max` and `min`
_BUILT_IN = (np.add, np.multiply)  # the `python` of the operators' built-in user functions


def ufunc_of(f: FunDecl) -> Optional[np.ufunc]:
    """The ufunc that `f(x, y)` computes, element by element, when `f` is one (see the module docstring)."""
    if isinstance(f, Vectorize):
        return ufunc_of(f.f)
    if isinstance(f, Lambda):
        return _passed_on(f)
    if not isinstance(f, UserFun) or f.arity != 2:
        return None
    t = f.out_type
    if not isinstance(t, (ScalarType, VectorType)) or f.in_types != (t, t):
        return None
    if f.python in _BUILT_IN and f.origin is None:
        return f.python
    body = getattr(f.origin, "body", None) if f.origin is not None else None
    if body is None or len(body) != 1 or not isinstance(body[0], Return):
        return None
    value, params = body[0].value, set(f.param_names)
    if isinstance(value, Binary) and value.op in _BINARY:
        operands, ufunc = (value.left, value.right), _BINARY[value.op]
    elif isinstance(value, Call) and value.name in _CALLS and len(value.args) == 2:
        operands, ufunc = value.args, _CALLS[value.name]
    else:
        return None
    if all(isinstance(o, Variable) and o.type == t for o in operands) and {o.name for o in operands} == params:
        return ufunc
    return None


def _passed_on(f: Lambda) -> Optional[np.ufunc]:
    """`λ a, b. g(a, b)` (or `g(b, a)`: the ufuncs commute) is `g`."""
    body = f.body
    if len(f.params) != 2 or not isinstance(body, FunCall) or len(body.args) != 2:
        return None
    if set(body.args) != set(f.params) or not all(isinstance(a, Param) for a in body.args):
        return None
    return ufunc_of(body.f)


def multiplies_pair(f: FunDecl) -> bool:
    """Whether `f`, applied to a pair of a zip, multiplies its components: `mult`, or `λ p. mult(get-0 p, get-1 p)`."""
    if ufunc_of(f) is np.multiply:
        return True
    if not isinstance(f, Lambda) or len(f.params) != 1 or not isinstance(f.body, FunCall):
        return False
    (p,), body = f.params, f.body
    if len(body.args) != 2 or ufunc_of(body.f) is not np.multiply:
        return False
    gets = sorted(a.f.i for a in body.args if isinstance(a, FunCall) and isinstance(a.f, P.Get) and a.args == (p,))
    return gets == [0, 1]


def split_accumulation(op: FunDecl) -> Optional[tuple]:
    """`λ acc, x. u(acc, g(x))`, with `u` a ufunc and `acc` not used by `g`, as `(u, λ x. g(x))`: the fold
    `reduce-seq(op, z)` is then `u(z, u.reduce(map(g)))`, the inverse of the paper's map-reduce fusion."""
    if not isinstance(op, Lambda) or len(op.params) != 2 or not isinstance(op.body, FunCall):
        return None
    acc, x = op.params
    body = op.body
    if len(body.args) != 2 or acc not in body.args:
        return None
    u = ufunc_of(body.f)
    other = body.args[1] if body.args[0] == acc else body.args[0]
    if u is None or other == acc or count_uses(other, acc) != 0:
        return None
    return u, Lambda((x,), other)
