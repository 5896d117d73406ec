"""Python operators and math functions on IR values: `v * 2.0`, `a * x + y`, `x < y`, `abs(x)`, `x ** 2`,
`lift.sqrt(x)` build calls of built-in user functions.

`Expr` inherits `ExprOperators`, so a plain lambda such as `Map(lambda v: v * 2.0)` is a program: each operator
applies one built-in user function (`mul_float`, `lt_int`, ...), defined once per operator and operand type,
with an OpenCL C body and a numpy twin. The operand type is the type known when the operator is applied: a
typed parameter (`fun([ArrayType(Float, N)], ...)`) or the result type of a user function's call; a literal
takes that type. Where only literals are typed (the parameter of `Map(lambda v: ...)` is typed later, by
inference), the literal gives the type: `v * 2.0` is `Float`, `v / 4` is `Int` (write `2.0` for floats,
`Literal(2.0, Double)` for doubles). Where nothing is typed, the type is `Float`.

Python's `math.sqrt(v)` cannot take an IR value (it asks for a Python float, and lift says to write
`lift.sqrt(v)`): lift's math functions (`MATH_FUNCTIONS`: `lift.sqrt, exp, log, sin, cos, tan, pow, fabs,
floor, ceil, fmin, fmax, tanh, erf`, ...) build the built-in user function `sqrt_float` on an IR value, compute
`math.sqrt` on a Python number, and are OpenCL's function of that name inside a user function. They take
floating-point values (an Int literal becomes a float).

A value whose type defines `__lift_math__(name, *args)` computes the function itself (lift arrays:
element-wise, `lift.arrays`), so that one `lift.sqrt` serves IR values, numbers and arrays.

`==` stays structural equality of nodes (the rewrite search compares and hashes expressions): write
`lift.eq(a, b)` / `lift.ne(a, b)` for the element-wise comparison.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from lift.errors import LiftTypeError
from lift.ir.userfun_body import MATH_FUNCTIONS
from lift.types.types import VECTOR_WIDTHS, Bool, Double, Float, Int, ScalarType, Type, VectorType

__all__ = ["ExprOperators", "LIFT_MATH", "builtin_of", "eq", "math_function", "math_userfun", "ne", "operator_userfun"]

_ARITHMETIC = {"add": "+", "sub": "-", "mul": "*", "div": "/"}
_COMPARISONS = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}
_NUMPY = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "lt": np.less, "le": np.less_equal,
          "gt": np.greater, "ge": np.greater_equal, "eq": np.equal, "ne": np.not_equal}
_WIDTH = {Int: 0, Float: 1, Double: 2}


def _type_name(t: Type) -> str:
    return f"{t.elem.name}{t.width}" if isinstance(t, VectorType) else t.name


def _c_div(x, y):
    """`/` as in C: true division on floating point, truncation toward zero on ints."""
    if np.issubdtype(np.asarray(x).dtype, np.integer):
        return np.trunc(np.true_divide(x, y)).astype(np.asarray(x).dtype)
    return np.true_divide(x, y)


@lru_cache(maxsize=None)
def operator_userfun(op: str, t: Type):
    """The built-in user function of operator `op` (`add`, `lt`, `neg`, `abs`, ...) on operands of type `t`."""
    from lift.ir.userfun import UserFun

    scalar = t.elem if isinstance(t, VectorType) else t
    if not isinstance(scalar, ScalarType) or scalar not in _WIDTH:
        raise LiftTypeError(f"operator {op}: operands of type {t} are not numbers (float, double, int or vectors)")
    name = f"{op}_{_type_name(t)}"
    if op == "neg":
        return UserFun(name, ("x",), "return -x;", (t,), t, python=np.negative)
    if op == "abs":
        c = "abs" if scalar == Int else "fabs"
        return UserFun(name, ("x",), f"return {c}(x);", (t,), t, python=np.abs)
    if op in _COMPARISONS:
        if isinstance(t, VectorType):
            raise LiftTypeError(f"operator {_COMPARISONS[op]}: comparisons of vectors ({t}) are lane masks, "
                                f"write a user function with `select`")
        return UserFun(name, ("x", "y"), f"return x {_COMPARISONS[op]} y;", (t, t), Bool, python=_NUMPY[op])
    python = _c_div if op == "div" else _NUMPY[op]
    return UserFun(name, ("x", "y"), f"return x {_ARITHMETIC[op]} y;", (t, t), t, python=python)


def _known_type(e):
    """The type of `e` as known before type inference, and whether it is only a literal's (weak) type."""
    from lift.ir.nodes import FunCall, Literal
    from lift.ir.userfun import UserFun

    if isinstance(e, Literal):
        return e.t, True
    t = getattr(e, "t", None)
    if t is None and isinstance(e, FunCall) and isinstance(e.f, UserFun):
        t = e.f.out_type
    return t, False


def _operand_type(*operands) -> Type:
    known = [_known_type(e) for e in operands]
    strong = [t for t, weak in known if t is not None and not weak]
    if strong:
        if any(t != strong[0] for t in strong):
            raise LiftTypeError(f"operator on values of different types {' and '.join(map(str, strong))}: "
                                f"convert one first")
        return strong[0]
    weak = [t for t, _ in known if t is not None]
    return max(weak, key=lambda t: _WIDTH.get(t, 0)) if weak else Float


def _apply(op: str, *operands):
    from lift.ir.nodes import to_expr

    exprs = tuple(to_expr(o) for o in operands)
    return operator_userfun(op, _operand_type(*exprs))(*exprs)


def builtin_of(f) -> "tuple | None":
    """`("operator_userfun" or "math_userfun", name, type)` where the user function `f` is that built-in (so that
    `lift.python_source` writes it as the call that builds it), else None."""
    name, _, type_name = f.name.rpartition("_")
    scalar = {s.name: s for s in _WIDTH}.get(type_name.rstrip("0123456789"))
    if not name or scalar is None:
        return None
    width = type_name[len(scalar.name):]
    if width and int(width) not in VECTOR_WIDTHS:
        return None
    t = VectorType(scalar, int(width)) if width else scalar
    for build in (operator_userfun, math_userfun):
        try:
            if build(name, t) == f:
                return build.__name__, name, t
        except (LiftTypeError, KeyError):
            continue
    return None


@lru_cache(maxsize=None)
def math_userfun(name: str, t: Type):
    """The built-in user function of the math function `name` (a key of `MATH_FUNCTIONS`) on values of type `t`."""
    from lift.ir.userfun import UserFun
    from lift.ir.userfun_numpy import NP_MATH

    scalar = t.elem if isinstance(t, VectorType) else t
    if scalar not in (Float, Double):
        raise LiftTypeError(f"lift.{name}: takes float or double values (or vectors of them), not {t}: convert "
                            f"first")
    params = ("x", "y")[:MATH_FUNCTIONS[name]]
    return UserFun(f"{name}_{_type_name(t)}", params, f"return {name}({', '.join(params)});", (t,) * len(params),
                   t, python=NP_MATH[name])


def math_function(name: str):
    """lift's math function `name`: on IR values it applies `math_userfun`, on Python numbers it computes."""
    arity = MATH_FUNCTIONS[name]
    np_name = {"fmin": "fmin", "fmax": "fmax"}.get(name)

    def function(*args):
        from lift.ir.nodes import Expr, Literal, to_expr

        if len(args) != arity:
            raise LiftTypeError(f"lift.{name} takes {arity} argument{'s' if arity > 1 else ''}, got {len(args)}")
        hook = next((h for h in (getattr(type(a), "__lift_math__", None) for a in args) if h is not None), None)
        if hook is not None:
            return hook(name, *args)
        if not any(isinstance(a, Expr) for a in args):
            return float(getattr(np, np_name)(*args)) if np_name else getattr(math, name)(*args)
        exprs = tuple(to_expr(a) for a in args)
        t = _operand_type(*exprs)
        if t == Int and not any(k is not None and not weak for k, weak in map(_known_type, exprs)):  # literals
            t = Float
        exprs = tuple(Literal(e.value, t) if isinstance(e, Literal) and e.t != t else e for e in exprs)
        return math_userfun(name, t)(*exprs)

    function.__name__ = function.__qualname__ = name
    function.__doc__ = (f"`{name}` on IR values (a call of the built-in user function `{name}_float`, ...), on "
                        f"Python numbers, and in user functions (OpenCL C's `{name}`).")
    return function


LIFT_MATH = {name: math_function(name) for name in MATH_FUNCTIONS}  # exported as lift.sqrt, lift.fmin, ...


def eq(a, b):
    """Element-wise `a == b` (a `Bool`): `==` on IR values is structural equality of the nodes."""
    return _apply("eq", a, b)


def ne(a, b):
    """Element-wise `a != b` (a `Bool`)."""
    return _apply("ne", a, b)


def _power(a, b):
    """`a ** b`: `a * a` for the exponent 2, else `pow`."""
    from lift.ir.nodes import Literal

    if isinstance(b, (int, float)) and b == 2 or isinstance(b, Literal) and b.value == 2:
        return _apply("mul", a, a)
    return math_function("pow")(a, b)


class ExprOperators:
    """Arithmetic (`+ - * /`, unary `-`, `abs`) and ordering comparisons on IR values."""

    __slots__ = ()

    def __add__(self, other): return _apply("add", self, other)
    def __radd__(self, other): return _apply("add", other, self)
    def __sub__(self, other): return _apply("sub", self, other)
    def __rsub__(self, other): return _apply("sub", other, self)
    def __mul__(self, other): return _apply("mul", self, other)
    def __rmul__(self, other): return _apply("mul", other, self)
    def __truediv__(self, other): return _apply("div", self, other)
    def __rtruediv__(self, other): return _apply("div", other, self)
    def __neg__(self): return _apply("neg", self)
    def __abs__(self): return _apply("abs", self)
    def __pow__(self, other): return _power(self, other)
    def __rpow__(self, other): return _power(other, self)
    def __lt__(self, other): return _apply("lt", self, other)
    def __le__(self, other): return _apply("le", self, other)
    def __gt__(self, other): return _apply("gt", self, other)
    def __ge__(self, other): return _apply("ge", self, other)

    def __bool__(self):
        raise LiftTypeError("a lift value has no truth value while the program is built: Python's `if`, `and`, `or`, "
                            "`not`, `max` and `min` cannot take it; write `lift.fmax(a, b)` or `lift.fmin(a, b)`, "
                            "or the choice inside a user function (`a if a > b else b`)")

    def __float__(self):
        raise LiftTypeError("a lift value is not a Python number: Python's `math` functions cannot take it, write "
                            "lift's (`lift.sqrt(v)` for `math.sqrt(v)`)")
