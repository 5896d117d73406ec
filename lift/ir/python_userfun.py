"""User functions written in Python, translated to OpenCL C and to numpy.

Lift's user functions (`add`, `abs`, BlackScholes' `BSComputation`, MD's `updateF`) are written once,
as annotated Python functions in a small subset, and serve both the OpenCL C code generator and the
reference interpreter. `translate(fn)` parses the function's source with `ast` and infers the type
of every expression from the parameter annotations, giving a small typed body. The typed body prints
as OpenCL C statements (`PythonUserFun.c_body`, also for the vector types of `vectorize-n(f)`) and
runs as numpy operations on whole arrays (`PythonUserFun.numpy_impl`).

The subset, with C's meaning where Python's differs:
- parameters and the result annotated with lift types; a tuple of types is a `TupleType`;
- locals, assigned (also `+=` etc.) and re-assigned; a local takes the widest type assigned to it,
  a parameter keeps its declared type;
- `+ - * / % **`, unary `-`, comparisons (chained too), `and or not`, `a if c else b`;
  `/` and `%` on ints truncate toward zero as in C, `%` on floats is `fmod`;
- `if`/`else` statements whose branches assign locals or both return (an `if` that returns makes
  the rest of the function its other branch);
- calls to `math` functions, `abs min max float int`, and to lift types: `Float(x)` converts,
  `VectorType(Float, 4)(a, b, c, d)` builds a vector;
- numeric literals, `math.pi`, `math.e` and numeric constants of the function's module, inlined;
  literals are `Float` or `Int` and take the other operand's type when it is wider
  (`x * 0.5` is `float` for a `Float` x, `double` for a `Double` x);
- vector components `v.x`..`v.w`, `v.s0`..`v.sF`, `v[i]`; tuple components `t[i]`; array elements `a[i]`;
- a tuple result, built in the `return` statement: `return (a, b)`.

On vectors, conditions are lane masks: conditional expressions become `select`, and `if` statements
assign (and return) lane by lane. numpy evaluates both branches of every condition and merges them
with `np.where`.
"""

from __future__ import annotations

import ast
import builtins
import inspect
import math
import operator
import re
import textwrap
from collections import ChainMap
from dataclasses import dataclass, field
from functools import cached_property, reduce
from typing import Callable, Mapping, Optional

import numpy as np

from lift.errors import LiftEvalError, LiftTypeError
from lift.opencl_gen.c_types import c_type_name
from lift.types.types import (ArrayType, Bool, Double, Float, Int, ScalarType, TupleType, Type, VectorType,
                              literal_type, tuple_field)


@dataclass(frozen=True)
class PythonUserFun:
    """A user function translated from Python: its signature and source, its C body and its numpy twin."""

    name: str
    param_names: tuple
    in_types: tuple
    out_type: Type
    source: str
    function: Callable = field(repr=False)  # two closures of one source are two user functions
    _definition: ast.FunctionDef = field(compare=False, repr=False)
    _first_line: int = field(compare=False, repr=False)

    def c_body(self, in_types: Optional[tuple] = None, out_type: Optional[Type] = None) -> str:
        """The OpenCL C statements of the body, for the declared types or for substituted (vector) ones."""
        in_types = self.in_types if in_types is None else tuple(in_types)
        out_type = self.out_type if out_type is None else out_type
        if len(in_types) != len(self.param_names):
            raise LiftTypeError(f"user function {self.name}: {len(self.param_names)} parameters, "
                                f"{len(in_types)} types given")
        body, local_types = _typed_body(self, in_types, out_type)
        return _CWriter(self.param_names, out_type, local_types).write(body)

    @cached_property
    def flops(self) -> int:
        """Floating-point operations of one application: the arithmetic operators (`+ - * / % **`) and calls
        on floating-point values in every statement, both branches of a condition included (on vectors
        the hardware runs both). `idf` has none, `add` one, `abs_and_add` one."""
        body, _ = _typed_body(self, self.in_types, self.out_type)
        return sum(_flops_of(stmt) for stmt in body)

    @cached_property
    def numpy_impl(self) -> Callable:
        """The function on numpy arrays: vector values carry a trailing lane axis, tuples are Python tuples."""
        body, _ = _typed_body(self, self.in_types, self.out_type)
        return _numpy_function(self, body)


def translate(fn: Callable) -> PythonUserFun:
    """Parse and type-check an annotated Python function; raise `LiftTypeError` outside the subset."""
    name = getattr(fn, "__name__", repr(fn))
    if not inspect.isfunction(fn) or name == "<lambda>":
        raise LiftTypeError(f"user function {name}: user functions are Python functions defined with `def`")
    try:
        lines, first_line = inspect.getsourcelines(fn)
    except (OSError, TypeError):
        raise LiftTypeError(f"user function {name}: its source code is not available (define it in a file)") from None
    source = textwrap.dedent("".join(lines))
    definition = ast.parse(source).body[0]
    if not isinstance(definition, ast.FunctionDef):
        raise LiftTypeError(f"user function {name}: user functions are Python functions defined with `def`")
    source = "\n".join(source.splitlines()[definition.lineno - 1:definition.end_lineno])

    def error(node, message):
        return LiftTypeError(f"user function {name}, line {node.lineno + first_line - 1}: {message}")

    args = definition.args
    if args.posonlyargs or args.vararg or args.kwonlyargs or args.kwarg or args.defaults:
        raise error(definition, "only plain parameters are supported (no defaults, `*args`, `**kwargs` "
                                "or keyword-only parameters)")
    annotations = fn.__annotations__

    def annotated_type(key, node, what):
        if key not in annotations:
            raise error(node, f"{what} has no type annotation")
        value = annotations[key]
        try:
            t = _as_type(eval(value, dict(_namespace(fn))) if isinstance(value, str) else value)
        except Exception as e:
            raise error(node, f"the annotation of {what} does not evaluate: {type(e).__name__}: {e}") from None
        if t is None:
            raise error(node, f"the annotation of {what} is not a lift type: {value!r}")
        if key == "return" and isinstance(t, ArrayType):
            raise error(node, f"a user function cannot return an array ({t})")
        return t

    _check_c_name(name, lambda message: error(definition, message))
    for a in args.args:
        _check_c_name(a.arg, lambda message, node=a: error(node, message))
    param_names = tuple(a.arg for a in args.args)
    in_types = tuple(annotated_type(a.arg, a, f"parameter `{a.arg}`") for a in args.args)
    out_type = annotated_type("return", definition, "the result")
    fun = PythonUserFun(name, param_names, in_types, out_type, source, fn, definition, first_line)
    _typed_body(fun, in_types, out_type)
    return fun


def _namespace(fn: Callable) -> Mapping:
    """The names that a function's body sees outside itself: its closure, then its module."""
    return ChainMap(inspect.getclosurevars(fn).nonlocals, fn.__globals__)


def _as_type(annotation) -> Optional[Type]:
    """A lift type from an annotation, where tuples and lists of types are tuple types; None if not a type."""
    if isinstance(annotation, Type):
        return annotation
    if isinstance(annotation, (tuple, list)):
        elems = [_as_type(a) for a in annotation]
        return None if None in elems else TupleType(*elems)
    return None


_C_RESERVED = set("""
    auto break case char const continue default do double else enum extern float for goto if inline int long
    register restrict return short signed sizeof static struct switch typedef union unsigned void volatile while
    bool half uchar ushort uint ulong size_t ptrdiff_t intptr_t uintptr_t global local constant private kernel
    read_only write_only read_write true false
    acos acosh acospi asin asinh asinpi atan atan2 atanh atanpi atan2pi cbrt ceil copysign cos cosh cospi erf
    erfc exp exp2 exp10 expm1 fabs fdim floor fma fmax fmin fmod fract frexp hypot ilogb ldexp lgamma lgamma_r
    log log2 log10 log1p logb mad maxmag minmag modf nan nextafter pow pown powr remainder remquo rint rootn
    round rsqrt sin sincos sinh sinpi sqrt tan tanh tanpi tgamma trunc
    abs abs_diff add_sat hadd rhadd clamp clz ctz mad_hi mad_sat max min mul_hi rotate sub_sat upsample popcount
    mad24 mul24 degrees mix radians step smoothstep sign cross dot distance length normalize fast_distance
    fast_length fast_normalize isequal isnotequal isgreater isgreaterequal isless islessequal islessgreater
    isfinite isinf isnan isnormal isordered isunordered signbit any all bitselect select shuffle shuffle2
    get_global_id get_local_id get_group_id get_global_size get_local_size get_num_groups get_work_dim
    get_global_offset barrier mem_fence read_mem_fence write_mem_fence printf
""".split())
_C_RESERVED_PATTERN = re.compile(r"((convert_|as_)?(u?(char|short|int|long)|float|double|half|bool)(2|3|4|8|16)?"
                                 r"|(native|half|atomic|async|vload|vstore|read_image|write_image)\w*)")


def _check_c_name(name: str, error: Callable):
    """Names become C identifiers as they are: reject OpenCL C's keywords, types and built-in functions."""
    if name in _C_RESERVED or _C_RESERVED_PATTERN.fullmatch(name):
        raise error(f"`{name}` is a keyword or built-in of OpenCL C: rename it")


# ---------------------------------------------------------------------------------------------------
# The typed body

@dataclass(frozen=True)
class _Const:
    value: object  # a Python bool, int or float
    type: Type


@dataclass(frozen=True)
class _Var:
    name: str
    type: Type


@dataclass(frozen=True)
class _Unary:
    op: str  # "-" or "!"
    operand: object
    type: Type


@dataclass(frozen=True)
class _Binary:
    op: str  # + - * / % < <= > >= == != and or
    left: object
    right: object
    type: Type


@dataclass(frozen=True)
class _Select:
    cond: object
    then: object
    other: object
    type: Type


@dataclass(frozen=True)
class _Call:
    name: str  # a key of _MATH_FUNCTIONS, or abs, min, max
    args: tuple
    type: Type


@dataclass(frozen=True)
class _Convert:
    operand: object
    type: Type


@dataclass(frozen=True)
class _MakeVector:
    elems: tuple
    type: Type


@dataclass(frozen=True)
class _Component:
    operand: object  # a vector
    index: int
    type: Type


@dataclass(frozen=True)
class _Field:
    operand: object  # a tuple
    index: int
    type: Type


@dataclass(frozen=True)
class _Index:
    array: object
    index: object
    type: Type


@dataclass(frozen=True)
class _MakeTuple:
    elems: tuple
    type: Type


@dataclass(frozen=True)
class _Assign:
    name: str
    value: object


@dataclass(frozen=True)
class _If:
    cond: object
    then: tuple
    other: tuple
    merged: tuple  # (name, type) of the variables assigned in a branch and defined after the `if`
    returns: bool  # both branches return


@dataclass(frozen=True)
class _Return:
    value: object


def _np_erf(x):
    """erf on arrays (numpy has none): a series of positive terms below 2.5, erfc's continued fraction above."""
    a = np.abs(np.asarray(x, np.float64))
    small = a < 2.5
    s = np.where(small, a, 0.0)
    term = total = s
    for n in range(1, 45):
        term = term * (2.0 * s * s) / (2 * n + 1)
        total = total + term
    series = 2.0 / math.sqrt(math.pi) * np.exp(-s * s) * total
    large = np.where(small, 2.5, a)
    fraction = large
    for n in range(50, 0, -1):
        fraction = large + (n / 2.0) / fraction
    tail = 1.0 - np.exp(-large * large) / (math.sqrt(math.pi) * fraction)
    return np.copysign(np.where(small, series, tail), x).astype(np.result_type(x))


# math.<name>: (arity, numpy function); OpenCL C has the same name.
_MATH_FUNCTIONS = {
    "sqrt": (1, np.sqrt), "exp": (1, np.exp), "expm1": (1, np.expm1), "log": (1, np.log), "log2": (1, np.log2),
    "log10": (1, np.log10), "log1p": (1, np.log1p), "sin": (1, np.sin), "cos": (1, np.cos), "tan": (1, np.tan),
    "asin": (1, np.arcsin), "acos": (1, np.arccos), "atan": (1, np.arctan), "sinh": (1, np.sinh),
    "cosh": (1, np.cosh), "tanh": (1, np.tanh), "asinh": (1, np.arcsinh), "acosh": (1, np.arccosh),
    "atanh": (1, np.arctanh), "floor": (1, np.floor), "ceil": (1, np.ceil), "trunc": (1, np.trunc),
    "fabs": (1, np.fabs), "erf": (1, _np_erf), "pow": (2, np.power), "atan2": (2, np.arctan2),
    "fmod": (2, np.fmod), "hypot": (2, np.hypot), "copysign": (2, np.copysign),
}
_MATH_BY_FUNCTION = {getattr(math, name): name for name in _MATH_FUNCTIONS}
_BUILTIN_FUNCTIONS = {builtins.abs: "abs", builtins.min: "min", builtins.max: "max"}
_BUILTIN_CONVERSIONS = {builtins.float: Float, builtins.int: Int}

_ARITHMETIC = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Mod: "%", ast.Pow: "**"}
_COMPARISONS = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}
_RANK = {Int: 0, Float: 1, Double: 2}

_UNSUPPORTED = {
    ast.While: "`while` loops", ast.For: "`for` loops", ast.With: "`with` blocks", ast.Try: "`try` blocks",
    ast.Raise: "`raise` statements", ast.Assert: "`assert` statements", ast.Pass: "`pass` statements",
    ast.Break: "`break` statements", ast.Continue: "`continue` statements", ast.Delete: "`del` statements",
    ast.Global: "`global` declarations", ast.Nonlocal: "`nonlocal` declarations", ast.Import: "imports",
    ast.ImportFrom: "imports", ast.FunctionDef: "nested functions", ast.ClassDef: "classes",
    ast.Match: "`match` statements", ast.AnnAssign: "annotated assignments",
    ast.Expr: "expressions used as statements", ast.Lambda: "lambdas", ast.List: "lists",
    ast.ListComp: "list comprehensions", ast.Dict: "dicts", ast.DictComp: "dict comprehensions",
    ast.Set: "sets", ast.SetComp: "set comprehensions", ast.GeneratorExp: "generator expressions",
    ast.JoinedStr: "f-strings", ast.NamedExpr: "`:=` expressions", ast.Yield: "`yield` expressions",
    ast.YieldFrom: "`yield` expressions", ast.Await: "`await` expressions", ast.Starred: "`*` unpackings",
    ast.Slice: "slices", ast.Tuple: "tuples outside a `return` statement",
}


def _flops_of(node) -> int:
    """The floating-point operations in a typed statement or expression (see `PythonUserFun.flops`)."""
    if isinstance(node, tuple):
        return sum(_flops_of(n) for n in node)
    if not hasattr(node, "__dataclass_fields__"):
        return 0
    own = 0
    if isinstance(node, (_Binary, _Call)) and _scalar(node.type) in (Float, Double):
        own = 1 if isinstance(node, _Call) or node.op in ("+", "-", "*", "/", "%", "**") else 0
    return own + sum(_flops_of(getattr(node, f)) for f in node.__dataclass_fields__ if f != "type")


def _typed_body(fun: PythonUserFun, in_types: tuple, out_type: Type) -> tuple:
    """The typed statements of `fun` for the given types, and the type of each local.

    A local's type is the widest type assigned to it, so typing repeats until no local widens.
    """
    local_types: dict = {}
    while True:
        typer = _Typer(fun, in_types, out_type, local_types)
        body = typer.function_body()
        if typer.locals == local_types:
            return body, local_types
        local_types = typer.locals


class _Typer:
    """Types one pass over a function's `ast`, with the locals' types of the previous pass."""

    def __init__(self, fun: PythonUserFun, in_types: tuple, out_type: Type, local_types: dict):
        self.fun = fun
        self.params = dict(zip(fun.param_names, in_types))
        self.out_type = out_type
        self.locals = dict(local_types)
        self.defined = set(self.params)
        self.namespace = _namespace(fun.function)
        self.mask_width: Optional[int] = None  # the lane count of the vector condition around a statement
        self.assigned = {n.id for n in ast.walk(fun._definition) if isinstance(n, ast.Name)
                         and isinstance(n.ctx, ast.Store)}

    def error(self, node, message: str) -> LiftTypeError:
        return LiftTypeError(f"user function {self.fun.name}, line {node.lineno + self.fun._first_line - 1}: "
                             f"{message}")

    def unsupported(self, node) -> LiftTypeError:
        what = _UNSUPPORTED.get(type(node)) or f"constructs like `{ast.unparse(node)}`"
        return self.error(node, f"{what} are not supported in user functions")

    # statements

    def function_body(self) -> tuple:
        stmts = self.fun._definition.body
        if isinstance(stmts[0], ast.Expr) and isinstance(stmts[0].value, ast.Constant) \
                and isinstance(stmts[0].value.value, str):
            stmts = stmts[1:]
        body = self.block(_early_returns(stmts))
        if not _returns(body):
            raise self.error(stmts[-1] if stmts else self.fun._definition, "the function must end with a `return`")
        return body

    def block(self, stmts: list) -> tuple:
        out = []
        for stmt in stmts:
            if _returns(out):
                raise self.error(stmt, "unreachable code after a `return`")
            out.append(self.statement(stmt))
        return tuple(out)

    def statement(self, stmt):
        if isinstance(stmt, ast.Assign):
            if len(stmt.targets) != 1 or not isinstance(stmt.targets[0], ast.Name):
                raise self.error(stmt, "only assignments to one name are supported (`x = ...`)")
            return self.assign(stmt, stmt.targets[0].id, self.expr(stmt.value))
        if isinstance(stmt, ast.AugAssign):
            if not isinstance(stmt.target, ast.Name):
                raise self.error(stmt, "only assignments to one name are supported (`x += ...`)")
            current = self.expr(ast.copy_location(ast.Name(stmt.target.id, ast.Load()), stmt))
            return self.assign(stmt, stmt.target.id, self.binary(stmt, stmt.op, current, self.expr(stmt.value)))
        if isinstance(stmt, ast.If):
            return self.if_statement(stmt)
        if isinstance(stmt, ast.Return):
            if stmt.value is None:
                raise self.error(stmt, "`return` needs a value")
            return _Return(self.result(stmt.value))
        raise self.unsupported(stmt)

    def assign(self, node, name: str, value) -> _Assign:
        if name in self.params:
            t = self.params[name]
            if self.mask_width and self.widen(node, t, self.mask_width) != t:
                raise self.error(node, f"the parameter `{name}` of type {t} cannot be assigned under a vector "
                                       "condition")
        else:
            _check_c_name(name, lambda message: self.error(node, message))
            t = self.join(node, self.locals.get(name, value.type), value.type)
            if self.mask_width:
                t = self.widen(node, t, self.mask_width)
            if isinstance(t, ArrayType):
                raise self.error(node, f"`{name}`: locals cannot hold arrays")
            self.locals[name] = t
        self.defined.add(name)
        return _Assign(name, self.convert(node, value, t))

    def if_statement(self, stmt: ast.If) -> _If:
        cond = self.condition(stmt.test)
        outer_width, before = self.mask_width, self.defined
        if isinstance(cond.type, VectorType):
            if outer_width not in (None, cond.type.width):
                raise self.error(stmt, f"a condition of {cond.type.width} lanes inside one of {outer_width}")
            self.mask_width = cond.type.width
        self.defined = set(before)
        then = self.block(stmt.body)
        then_defined, self.defined = self.defined, set(before)
        other = self.block(stmt.orelse)
        other_defined = self.defined
        self.mask_width = outer_width
        if _returns(then) != _returns(other):
            raise self.error(stmt, "only one branch of this `if` returns: the function must return on every path")
        self.defined = before | (then_defined & other_defined)
        changed = _assigned(then).keys() | _assigned(other).keys()
        merged = tuple((n, self.type_of(n)) for n in sorted(self.defined & changed))
        return _If(cond, then, other, () if _returns(then) else merged, _returns(then))

    def result(self, node):
        if isinstance(node, ast.Tuple) and not isinstance(self.out_type, TupleType):
            raise self.error(node, f"returns a tuple, but the result type is {self.out_type}")
        if self.mask_width and not _has_lanes(self.out_type, self.mask_width):
            raise self.error(node, f"a {self.out_type} result cannot be returned under a vector condition")
        if isinstance(node, ast.Tuple) and isinstance(self.out_type, TupleType):
            if len(node.elts) != len(self.out_type.elems):
                raise self.error(node, f"returns {len(node.elts)} values for the result type {self.out_type}")
            return _MakeTuple(tuple(self.convert(e, self.expr(e), t) for e, t in zip(node.elts, self.out_type.elems)),
                              self.out_type)
        return self.convert(node, self.expr(node), self.out_type)

    # expressions

    def expr(self, node):
        method = getattr(self, "expr_" + type(node).__name__, None)
        if method is None:
            raise self.unsupported(node)
        return method(node)

    def expr_Constant(self, node: ast.Constant):
        return self.constant(node, node.value, repr(node.value))

    def expr_Name(self, node: ast.Name):
        name = node.id
        if name in self.defined:
            return _Var(name, self.type_of(name))
        if name in self.assigned:
            raise self.error(node, f"`{name}` is used before it is assigned")
        return self.constant(node, self.static(node), name)

    def type_of(self, name: str) -> Type:
        return self.params[name] if name in self.params else self.locals[name]

    def expr_Attribute(self, node: ast.Attribute):
        if self.is_static(node.value):
            return self.constant(node, self.static(node), ast.unparse(node))
        vector = self.expr(node.value)
        if not isinstance(vector.type, VectorType):
            raise self.error(node, f"`.{node.attr}` needs a vector, not a value of type {vector.type}")
        match = re.fullmatch(r"([xyzw])|s([0-9a-fA-F])", node.attr)
        if match is None:
            raise self.error(node, f"`.{node.attr}` is not a vector component (`.x`..`.w`, `.s0`..`.sF`)")
        index = "xyzw".index(match[1]) if match[1] else int(match[2], 16)
        return self.component(node, vector, index)

    def expr_Subscript(self, node: ast.Subscript):
        value = self.expr(node.value)
        if isinstance(node.slice, ast.Slice):
            raise self.unsupported(node.slice)
        index = self.expr(node.slice)
        t = value.type
        if isinstance(t, ArrayType):
            if index.type != Int:
                raise self.error(node, f"an array index must be an Int, not {index.type}")
            if isinstance(t.elem, ArrayType):
                raise self.error(node, "only one-dimensional arrays can be indexed in user functions")
            return _Index(value, index, t.elem)
        if not isinstance(t, (TupleType, VectorType)):
            raise self.error(node, f"a value of type {t} cannot be indexed")
        if not (isinstance(index, _Const) and index.type == Int):
            raise self.error(node, f"the index of a {t} must be an integer constant")
        size = len(t.elems) if isinstance(t, TupleType) else t.width
        if not -size <= index.value < size:
            raise self.error(node, f"index {index.value} is out of range for {t}")
        if isinstance(t, VectorType):
            return self.component(node, value, index.value % size)
        return _Field(value, index.value % size, t.elems[index.value % size])

    def component(self, node, vector, index: int) -> _Component:
        if index >= vector.type.width:
            raise self.error(node, f"{vector.type} has no component {index}")
        return _Component(vector, index, vector.type.elem)

    def expr_Tuple(self, node: ast.Tuple):
        raise self.unsupported(node)

    def expr_BinOp(self, node: ast.BinOp):
        return self.binary(node, node.op, self.expr(node.left), self.expr(node.right))

    def binary(self, node, op: ast.operator, left, right):
        if type(op) not in _ARITHMETIC:
            hint = " (`/` divides Int values as C does, truncating toward zero)" if isinstance(op, ast.FloorDiv) else ""
            raise self.error(node, f"the operator `{_operator_symbol(op)}` is not supported in user functions{hint}")
        symbol = _ARITHMETIC[type(op)]
        if symbol == "**":
            if isinstance(right, _Const) and right.value == 2:
                return self.binary(node, ast.Mult(), left, left)
            return self.math_call(node, "pow", [left, right])
        t = self.arithmetic_type(node, symbol, left.type, right.type)
        left, right = self.convert(node, left, t), self.convert(node, right, t)
        if isinstance(left, _Const) and isinstance(right, _Const):
            try:
                return _Const(_fold(symbol, left.value, right.value, t), t)
            except ZeroDivisionError:
                raise self.error(node, "division by zero") from None
        return _Binary(symbol, left, right, t)

    def expr_UnaryOp(self, node: ast.UnaryOp):
        if isinstance(node.op, ast.Not):
            operand = self.truth(node, self.expr(node.operand))
            return _Unary("!", operand, operand.type)
        operand = self.expr(node.operand)
        if isinstance(node.op, ast.Invert):
            raise self.error(node, "the operator `~` is not supported in user functions")
        self.arithmetic_type(node, "-", operand.type, operand.type)
        if isinstance(node.op, ast.UAdd):
            return operand
        if isinstance(operand, _Const):
            return _Const(-operand.value, operand.type)
        return _Unary("-", operand, operand.type)

    def expr_Compare(self, node: ast.Compare):
        operands = [self.expr(node.left)] + [self.expr(c) for c in node.comparators]
        tests = [self.compare(node, op, a, b) for op, a, b in zip(node.ops, operands, operands[1:])]
        return reduce(lambda a, b: self.logic(node, "and", a, b), tests)

    def compare(self, node, op: ast.cmpop, left, right) -> _Binary:
        if type(op) not in _COMPARISONS:
            raise self.error(node, f"the comparison `{_operator_symbol(op)}` is not supported in user functions")
        symbol = _COMPARISONS[type(op)]
        t = self.join(node, left.type, right.type)
        if not _is_number(t) and not (_is_bool(t) and symbol in ("==", "!=")):
            raise self.error(node, f"`{symbol}` cannot compare values of type {t}")
        return _Binary(symbol, self.convert(node, left, t), self.convert(node, right, t), _bool_like(t))

    def expr_BoolOp(self, node: ast.BoolOp):
        op = "and" if isinstance(node.op, ast.And) else "or"
        return reduce(lambda a, b: self.logic(node, op, a, b), [self.expr(v) for v in node.values])

    def logic(self, node, op: str, left, right) -> _Binary:
        left, right = self.truth(node, left), self.truth(node, right)
        t = self.join(node, left.type, right.type)
        return _Binary(op, self.convert(node, left, t), self.convert(node, right, t), t)

    def condition(self, node):
        return self.truth(node, self.expr(node))

    def truth(self, node, value):
        """A condition as a Bool (or a lane mask): numbers are true when not zero, as in C and Python."""
        if _is_bool(value.type):
            return value
        if not _is_number(value.type):
            raise self.error(node, f"a value of type {value.type} cannot be a condition")
        return _Binary("!=", value, self.convert(node, _Const(0, Int), value.type), _bool_like(value.type))

    def expr_IfExp(self, node: ast.IfExp):
        cond = self.condition(node.test)
        then, other = self.expr(node.body), self.expr(node.orelse)
        t = self.join(node, then.type, other.type)
        if isinstance(cond.type, VectorType):
            t = self.widen(node, t, cond.type.width)
        return _Select(cond, self.convert(node, then, t), self.convert(node, other, t), t)

    def expr_Call(self, node: ast.Call):
        function = ast.unparse(node.func)
        if node.keywords:
            raise self.error(node, f"`{function}`: keyword arguments are not supported in user functions")
        if isinstance(node.func, ast.Name) and self.is_static(node.func) and self.lookup(node.func.id) is _MISSING:
            raise self.error(node, f"unknown function `{function}`")
        callee = self.static(node.func) if self.is_static(node.func) else None
        if not callable(callee):
            raise self.error(node, f"`{function}` is not a function")
        args = [self.expr(a) for a in node.args]
        if callee in _MATH_BY_FUNCTION:
            return self.math_call(node, _MATH_BY_FUNCTION[callee], args)
        if callee in _BUILTIN_FUNCTIONS:
            return self.builtin_call(node, _BUILTIN_FUNCTIONS[callee], args)
        if callee in _BUILTIN_CONVERSIONS or isinstance(callee, ScalarType):
            if len(args) != 1:
                raise self.error(node, f"`{function}` takes one argument")
            t = _BUILTIN_CONVERSIONS.get(callee, callee)
            lanes = args[0].type
            return self.convert(node, args[0], VectorType(t, lanes.width) if isinstance(lanes, VectorType) else t)
        if isinstance(callee, VectorType):
            if len(args) == 1:
                return self.convert(node, args[0], callee)
            if len(args) != callee.width:
                raise self.error(node, f"`{function}` takes 1 or {callee.width} arguments")
            return _MakeVector(tuple(self.convert(node, a, callee.elem) for a in args), callee)
        raise self.error(node, f"`{function}` cannot be called in user functions; they can call math functions "
                               f"(`math.sqrt`, ...), `abs`, `min`, `max`, `float`, `int` and lift types")

    def math_call(self, node, name: str, args: list) -> _Call:
        arity = _MATH_FUNCTIONS[name][0]
        if len(args) != arity:
            raise self.error(node, f"`math.{name}` takes {arity} argument{'s' if arity > 1 else ''}")
        t = reduce(lambda a, b: self.arithmetic_type(node, name, a, b), [a.type for a in args], Float)
        return _Call(name, tuple(self.convert(node, a, t) for a in args), t)

    def builtin_call(self, node, name: str, args: list) -> _Call:
        if name == "abs":
            if len(args) != 1:
                raise self.error(node, "`abs` takes one argument")
            return _Call("abs", tuple(args), self.arithmetic_type(node, "abs", args[0].type, args[0].type))
        if len(args) < 2:
            raise self.error(node, f"`{name}` takes two or more arguments")

        def pair(a, b):
            t = self.arithmetic_type(node, name, a.type, b.type)
            return _Call(name, (self.convert(node, a, t), self.convert(node, b, t)), t)

        return reduce(pair, args)

    # names and constants of the function's module

    def is_static(self, node) -> bool:
        """Whether `node` names something of the module (`math.pi`, a constant), not a value of the body."""
        if isinstance(node, ast.Attribute):
            return self.is_static(node.value)
        return isinstance(node, ast.Name) and node.id not in self.assigned and node.id not in self.params

    def lookup(self, name: str):
        return self.namespace[name] if name in self.namespace else getattr(builtins, name, _MISSING)

    def static(self, node):
        """The Python object that a module-level name or attribute refers to."""
        if isinstance(node, ast.Name):
            value = self.lookup(node.id)
            if value is _MISSING:
                raise self.error(node, f"`{node.id}` is not defined")
            return value
        base = self.static(node.value)
        if not hasattr(base, node.attr):
            raise self.error(node, f"`{ast.unparse(node)}` is not defined")
        return getattr(base, node.attr)

    def constant(self, node, value, text: str) -> _Const:
        if not isinstance(value, (bool, int, float, np.bool_, np.integer, np.floating)):
            raise self.error(node, f"`{text}` is not a number: user functions can use their module's numeric "
                                   "constants, not other objects")
        t = literal_type(value)
        if t == Int and not -2**31 <= value < 2**31:
            raise self.error(node, f"{value} does not fit in an Int")
        return _Const(_python_value(value, t), t)

    # types

    def arithmetic_type(self, node, op: str, a: Type, b: Type) -> Type:
        """The type of arithmetic on `a` and `b`: the wider scalar, with the lanes of the vector operand."""
        for t in (a, b):
            if not _is_number(t):
                raise self.error(node, f"`{op}` needs numbers, not a value of type {t}")
        widths = {t.width for t in (a, b) if isinstance(t, VectorType)}
        if len(widths) > 1:
            raise self.error(node, f"`{op}` on vectors of different widths: {a} and {b}")
        elem = max(_scalar(a), _scalar(b), key=_RANK.get)
        return VectorType(elem, widths.pop()) if widths else elem

    def join(self, node, a: Type, b: Type) -> Type:
        """The type that holds values of both `a` and `b` (the branches of a condition, a re-assigned local)."""
        if a == b:
            return a
        if _is_bool(a) and _is_bool(b):
            return self.widen(node, b, a.width) if isinstance(a, VectorType) else self.widen(node, a, b.width)
        if _is_number(a) and _is_number(b):
            return self.arithmetic_type(node, "=", a, b)
        raise self.error(node, f"values of types {a} and {b} do not mix")

    def widen(self, node, t: Type, width: int) -> Type:
        """`t` with `width` lanes, for a value chosen lane by lane by a vector condition."""
        if isinstance(t, ScalarType):
            return VectorType(t, width)
        if isinstance(t, VectorType) and t.width == width:
            return t
        raise self.error(node, f"a vector condition of {width} lanes cannot choose between values of type {t}")

    def convert(self, node, value, t: Type):
        """`value` as a `t`: scalar conversions, scalars broadcast to vectors, vectors converted lane-wise."""
        source = value.type
        if source == t:
            return value
        if isinstance(source, ScalarType) and isinstance(t, VectorType):
            return _Convert(self.convert(node, value, t.elem), t)
        if _is_number(source) and _is_number(t) and isinstance(source, VectorType) == isinstance(t, VectorType) \
                and getattr(source, "width", None) == getattr(t, "width", None):
            if isinstance(value, _Const):
                return _Const(_python_value(value.value, t), t)
            return _Convert(value, t)
        raise self.error(node, f"a value of type {source} where {t} is expected")


_MISSING = object()


def _operator_symbol(op) -> str:
    symbols = {ast.FloorDiv: "//", ast.MatMult: "@", ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^",
               ast.LShift: "<<", ast.RShift: ">>", ast.Is: "is", ast.IsNot: "is not", ast.In: "in",
               ast.NotIn: "not in"}
    return symbols.get(type(op), type(op).__name__)


def _scalar(t: Type) -> ScalarType:
    return t.elem if isinstance(t, VectorType) else t


def _is_number(t: Type) -> bool:
    return isinstance(t, (ScalarType, VectorType)) and _scalar(t) in _RANK


def _is_bool(t: Type) -> bool:
    return isinstance(t, (ScalarType, VectorType)) and _scalar(t) == Bool


def _bool_like(t: Type) -> Type:
    """The type of a comparison of `t` values: Bool, or a lane mask for vectors."""
    return VectorType(Bool, t.width) if isinstance(t, VectorType) else Bool


def _has_lanes(t: Type, width: int) -> bool:
    if isinstance(t, TupleType):
        return all(_has_lanes(e, width) for e in t.elems)
    return isinstance(t, VectorType) and t.width == width


def _python_value(value, t: Type):
    t = _scalar(t)
    return bool(value) if t == Bool else int(value) if t == Int else float(value)


def _fold(op: str, a, b, t: Type):
    """Arithmetic on two constants, with C's integer division."""
    if t == Int and op in "/%":
        q = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)
        return q if op == "/" else a - b * q
    ops = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv, "%": math.fmod}
    return ops[op](a, b)


def _early_returns(stmts: list) -> list:
    """The statements with every `if` that returns in one branch only taking the rest in its other branch."""
    for i, stmt in enumerate(stmts):
        if isinstance(stmt, ast.If):
            rest, body, orelse = stmts[i + 1:], stmt.body, stmt.orelse
            if rest and _ast_returns(body) and not _ast_returns(orelse):
                orelse, rest = orelse + rest, []
            elif rest and _ast_returns(orelse) and not _ast_returns(body):
                body, rest = body + rest, []
            stmt = ast.copy_location(ast.If(stmt.test, _early_returns(body), _early_returns(orelse)), stmt)
            return stmts[:i] + [stmt] + _early_returns(rest)
    return stmts


def _ast_returns(stmts: list) -> bool:
    last = stmts[-1] if stmts else None
    return isinstance(last, ast.Return) or isinstance(last, ast.If) and _ast_returns(last.body) \
        and _ast_returns(last.orelse)


def _returns(stmts) -> bool:
    last = stmts[-1] if stmts else None
    return isinstance(last, _Return) or isinstance(last, _If) and last.returns


def _assigned(stmts) -> dict:
    """The names assigned in typed statements, in order of first assignment (a dict used as ordered set)."""
    names = {}
    for stmt in stmts:
        if isinstance(stmt, _Assign):
            names[stmt.name] = None
        elif isinstance(stmt, _If):
            names.update(_assigned(stmt.then))
            names.update(_assigned(stmt.other))
    return names


# ---------------------------------------------------------------------------------------------------
# OpenCL C

_PRIMARY, _UNARY, _CONDITIONAL = 16, 14, 3
_C_PRECEDENCE = {"or": 4, "and": 5, "==": 9, "!=": 9, "<": 10, "<=": 10, ">": 10, ">=": 10, "+": 12, "-": 12,
                 "*": 13, "/": 13, "%": 13}
_C_OPERATORS = {"and": "&&", "or": "||"}


def _c_type(t: Type) -> str:
    """The C type of a local: lane masks are int vectors, as OpenCL's vector comparisons give."""
    if isinstance(t, VectorType) and t.elem == Bool:
        return f"int{t.width}"
    return c_type_name(t)


def _broadcast(e):
    """The scalar that `e` broadcasts to a vector of the same element type, or None."""
    if isinstance(e, _Convert) and isinstance(e.operand.type, ScalarType) and e.operand.type == _scalar(e.type):
        return e.operand
    return None


def _c_literal(value, t: Type) -> str:
    if t == Bool:
        return "true" if value else "false"
    if t == Int:
        return str(value)
    if math.isnan(value):
        return "NAN"
    text = repr(value) if math.isfinite(value) else ("-" if value < 0 else "") + "INFINITY"
    return text + "f" if t == Float and math.isfinite(value) else text


class _CWriter:
    """Prints typed statements as OpenCL C; under a vector condition, assignments and returns go lane-wise."""

    def __init__(self, param_names: tuple, out_type: Type, local_types: dict):
        self.out_type = out_type
        self.local_types = local_types
        self.declared = set(param_names)
        names = set(param_names) | set(local_types)
        self.result = next(n for n in (f"result{'_' * i}" for i in range(len(names) + 1)) if n not in names)
        self.lines: list = []
        self.depth = 0

    def write(self, body: tuple) -> str:
        self.block(body, None)
        return "\n".join(self.lines)

    def line(self, text: str):
        self.lines.append("    " * self.depth + text)

    def block(self, stmts: tuple, mask: Optional[str]):
        for stmt in stmts:
            if isinstance(stmt, _Assign):
                self.assign(stmt, mask)
            elif isinstance(stmt, _If):
                self.if_statement(stmt, mask)
            else:
                self.return_statement(stmt, mask)

    def assign(self, stmt: _Assign, mask: Optional[str]):
        value = self.expr(stmt.value)
        if mask:
            value = f"select({stmt.name}, {value}, {mask})"
        if stmt.name in self.declared:
            self.line(f"{stmt.name} = {value};")
        else:
            self.declared.add(stmt.name)
            self.line(f"{_c_type(self.local_types[stmt.name])} {stmt.name} = {value};")

    def if_statement(self, stmt: _If, mask: Optional[str]):
        vector = isinstance(stmt.cond.type, VectorType)
        for name in _assigned((stmt,)) if vector else [name for name, _ in stmt.merged]:
            if name not in self.declared:
                self.declared.add(name)
                self.line(f"{_c_type(self.local_types[name])} {name};")
        if not vector:
            self.line(f"if ({self.expr(stmt.cond)}) {{")
            self.nested(stmt.then, mask)
            if stmt.other:
                self.line("} else {")
                self.nested(stmt.other, mask)
            self.line("}")
            return
        returns_here = stmt.returns and mask is None
        if returns_here:
            self.line(f"{_c_type(self.out_type)} {self.result};")
        then = self.expr(stmt.cond, _C_PRECEDENCE["and"] + 1)
        other = "!" + self.expr(stmt.cond, _UNARY)
        self.block(stmt.then, then if mask is None else f"{mask} && {then}")
        self.block(stmt.other, other if mask is None else f"{mask} && {other}")
        if returns_here:
            self.line(f"return {self.result};")

    def nested(self, stmts: tuple, mask: Optional[str]):
        """A C block: the locals it declares are not declared after it."""
        declared = set(self.declared)
        self.depth += 1
        self.block(stmts, mask)
        self.depth -= 1
        self.declared = declared

    def return_statement(self, stmt: _Return, mask: Optional[str]):
        value = stmt.value
        if mask is None and not isinstance(value, _MakeTuple):
            self.line(f"return {self.expr(value)};")
            return
        if mask is None:
            self.line(f"{_c_type(self.out_type)} {self.result};")
        if isinstance(self.out_type, TupleType):
            targets = [f"{self.result}.{tuple_field(i)}" for i in range(len(self.out_type.elems))]
            values = [self.expr(e) for e in value.elems] if isinstance(value, _MakeTuple) else \
                [f"{self.expr(value, _PRIMARY)}.{tuple_field(i)}" for i in range(len(targets))]
        else:
            targets, values = [self.result], [self.expr(value)]
        for target, v in zip(targets, values):
            self.line(f"{target} = {v if mask is None else f'select({target}, {v}, {mask})'};")
        if mask is None:
            self.line(f"return {self.result};")

    def expr(self, e, min_precedence: int = 0) -> str:
        text, precedence = self.c_expr(e)
        return f"({text})" if precedence < min_precedence else text

    def c_expr(self, e) -> tuple:
        match e:
            case _Const(value, t):
                text = _c_literal(value, t)
                return text, _UNARY if text.startswith("-") else _PRIMARY
            case _Var(name, _):
                return name, _PRIMARY
            case _Unary(op, x, _):
                inner = self.expr(x, _UNARY)
                return op + (f"({inner})" if inner.startswith("-") else inner), _UNARY
            case _Binary(op, left, right, _):
                if not (_broadcast(left) and _broadcast(right)):  # OpenCL broadcasts a scalar operand itself
                    left, right = _broadcast(left) or left, _broadcast(right) or right
                p = _C_PRECEDENCE[op]
                return f"{self.expr(left, p)} {_C_OPERATORS.get(op, op)} {self.expr(right, p + 1)}", p
            case _Select(cond, then, other, _) if isinstance(cond.type, VectorType):
                return f"select({self.expr(other)}, {self.expr(then)}, {self.expr(cond)})", _PRIMARY
            case _Select(cond, then, other, _):
                return (f"{self.expr(cond, _CONDITIONAL + 1)} ? {self.expr(then)} : "
                        f"{self.expr(other, _CONDITIONAL)}"), _CONDITIONAL
            case _Call(name, args, t):
                return self.call(name, [self.expr(a) for a in args], t)
            case _Convert(x, t):
                return self.conversion(x, t)
            case _MakeVector(elems, t):
                return f"({c_type_name(t)})({', '.join(self.expr(x) for x in elems)})", _UNARY
            case _Component(x, i, _):
                name = "xyzw"[i] if x.type.width <= 4 else f"s{i:X}"
                return f"{self.expr(x, _PRIMARY)}.{name}", _PRIMARY
            case _Field(x, i, _):
                return f"{self.expr(x, _PRIMARY)}.{tuple_field(i)}", _PRIMARY
            case _Index(array, index, _):
                return f"{self.expr(array, _PRIMARY)}[{self.expr(index)}]", _PRIMARY
        raise AssertionError(f"no C for {e}")

    def call(self, name: str, args: list, t: Type) -> tuple:
        integer = _scalar(t) == Int
        if name in ("min", "max"):
            name = name if integer else "f" + name
        elif name == "abs" and not integer:
            name = "fabs"
        text = f"{name}({', '.join(args)})"
        if name == "abs":  # OpenCL's abs of an int is unsigned
            return (f"convert_{c_type_name(t)}({text})", _PRIMARY) if isinstance(t, VectorType) else \
                (f"(int){text}", _UNARY)
        return text, _PRIMARY

    def conversion(self, x, t: Type) -> tuple:
        source = x.type
        if isinstance(source, ScalarType) and isinstance(t, VectorType):
            if source == Bool:  # a true lane of a mask is -1
                return f"({_c_type(t)})(-(int){self.expr(x, _UNARY)})", _UNARY
            return f"({c_type_name(t)})({self.expr(x)})", _UNARY
        if isinstance(t, VectorType):
            return f"convert_{c_type_name(t)}({self.expr(x)})", _PRIMARY
        return f"({c_type_name(t)}){self.expr(x, _UNARY)}", _UNARY


# ---------------------------------------------------------------------------------------------------
# numpy

_NP_BINARY = {"+": np.add, "-": np.subtract, "*": np.multiply, "/": np.true_divide, "%": np.fmod,
              "<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal, "==": np.equal,
              "!=": np.not_equal, "and": np.logical_and, "or": np.logical_or}
_NP_BUILTINS = {"abs": np.abs, "min": np.fmin, "max": np.fmax}


def _numpy_function(fun: PythonUserFun, body: tuple) -> Callable:
    """A Python function that runs `body` once on whole arrays."""

    def impl(*args):
        if len(args) != len(fun.in_types):
            raise LiftEvalError(f"user function {fun.name} takes {len(fun.in_types)} arguments, got {len(args)}")
        values = [_np_input(fun.name, a, t) for a, t in zip(args, fun.in_types)]
        batch = np.broadcast_shapes(*(_batch_shape(v, t) for v, t in zip(values, fun.in_types)))
        with np.errstate(all="ignore"):
            result = _np_block(body, dict(zip(fun.param_names, values)), fun.out_type)
        return _np_output(result, fun.out_type, batch)

    impl.__name__ = impl.__qualname__ = fun.name
    impl.__doc__ = f"numpy implementation of the user function {fun.name}:\n\n{fun.source}"
    return impl


def _np_input(name: str, value, t: Type):
    if isinstance(t, ArrayType):
        return _np_input(name, value, t.elem)
    if isinstance(t, TupleType):
        return tuple(_np_input(name, v, e) for v, e in zip(value, t.elems))
    value = np.asarray(value, t.dtype)
    if isinstance(t, VectorType) and (value.ndim == 0 or value.shape[-1] != t.width):
        raise LiftEvalError(f"user function {name}: a {t} argument needs a last axis of {t.width} lanes, "
                            f"got shape {value.shape}")
    return value


def _batch_shape(value, t: Type) -> tuple:
    """The shape of the elements an argument holds: arrays are passed whole, vectors have a lane axis."""
    if isinstance(t, ArrayType):
        return ()
    if isinstance(t, TupleType):
        return np.broadcast_shapes(*(_batch_shape(v, e) for v, e in zip(value, t.elems)))
    return value.shape[:-1] if isinstance(t, VectorType) else value.shape


def _np_output(value, t: Type, batch: tuple):
    if isinstance(t, TupleType):
        return tuple(_np_output(v, e, batch) for v, e in zip(value, t.elems))
    value = np.asarray(value, t.dtype)
    shape = batch + ((t.width,) if isinstance(t, VectorType) else ())
    return value if value.shape == shape else np.broadcast_to(value, shape).copy()


def _np_block(stmts: tuple, env: dict, out_type: Type):
    """Run statements on arrays; both branches of an `if` run and `np.where` merges them."""
    for stmt in stmts:
        match stmt:
            case _Assign(name, value):
                env[name] = _np_eval(value, env)
            case _Return(value):
                return _np_eval(value, env)
            case _If(cond, then, other, merged, returns):
                mask = _np_eval(cond, env)
                then_env, other_env = dict(env), dict(env)
                then_result, other_result = _np_block(then, then_env, out_type), _np_block(other, other_env, out_type)
                if returns:
                    return _np_where(mask, cond.type, then_result, other_result, out_type)
                for name, t in merged:
                    env[name] = _np_where(mask, cond.type, then_env[name], other_env[name], t)
    return None


def _np_where(mask, mask_type: Type, then, other, t: Type):
    if isinstance(t, TupleType):
        return tuple(_np_where(mask, mask_type, a, b, e) for a, b, e in zip(then, other, t.elems))
    if isinstance(t, VectorType) and isinstance(mask_type, ScalarType):
        mask = np.asarray(mask)[..., np.newaxis]
    return np.where(mask, then, other)


def _np_eval(e, env: dict):
    match e:
        case _Const(value, t):
            return t.dtype.type(value)
        case _Var(name, _):
            return env[name]
        case _Unary("-", x, _):
            return np.negative(_np_eval(x, env))
        case _Unary("!", x, _):
            return np.logical_not(_np_eval(x, env))
        case _Binary("/", left, right, t) if _scalar(t) == Int:
            a, b = _np_eval(left, env), _np_eval(right, env)
            return (a - np.fmod(a, b)) // b  # C's division, truncating toward zero
        case _Binary(op, left, right, _):
            return _NP_BINARY[op](_np_eval(left, env), _np_eval(right, env))
        case _Select(cond, then, other, t):
            return _np_where(_np_eval(cond, env), cond.type, _np_eval(then, env), _np_eval(other, env), t)
        case _Call(name, args, _):
            function = _NP_BUILTINS.get(name) or _MATH_FUNCTIONS[name][1]
            return function(*(_np_eval(a, env) for a in args))
        case _Convert(x, t):
            value = np.asarray(_np_eval(x, env)).astype(t.dtype)
            if isinstance(x.type, ScalarType) and isinstance(t, VectorType):
                return np.broadcast_to(value[..., np.newaxis], value.shape + (t.width,))
            return value
        case _MakeVector(elems, _):
            return np.stack(np.broadcast_arrays(*(_np_eval(x, env) for x in elems)), axis=-1)
        case _Component(x, i, _):
            return _np_eval(x, env)[..., i]
        case _Field(x, i, _):
            return _np_eval(x, env)[i]
        case _Index(array, index, t):
            values, i = _np_eval(array, env), _np_eval(index, env)
            return tuple(v[i] for v in values) if isinstance(t, TupleType) else values[i]
        case _MakeTuple(elems, _):
            return tuple(_np_eval(x, env) for x in elems)
    raise AssertionError(f"no numpy meaning for {e}")
