"""The front end of user functions written in Python: their `ast`, typed, becomes a typed body
(`lift.ir.userfun_body`).

`typed_body(fun, in_types, out_type)` types the body of a translated function (`PythonUserFun`) for its
declared types or for the vector types of `vectorize-n(f)`, and raises `LiftTypeError`, naming the line,
for anything outside the subset that `lift.ir.python_userfun` describes. Names become C identifiers as
they are, so OpenCL C's keywords and built-ins are rejected here.
"""

from __future__ import annotations

import ast
import builtins
import math
import operator
import re
from functools import reduce
from typing import Optional

import numpy as np

from lift.errors import LiftTypeError
from lift.ir.c_names import check_c_name
from lift.ir.operators import LIFT_MATH
from lift.ir.userfun_body import (MATH_FUNCTIONS, NUMBER_RANK, Assign, Binary, Call, Component, Const, Convert, Field,
                                  For, If, Index, Length, MakeTuple, MakeVector, Return, Select, Unary, Variable,
                                  assigned, is_bool, is_number, lanes_scalar, returns)
from lift.ir.userfun_numpy import bitwise_numpy
from lift.ir.userfun_scope import MISSING, ModuleScope
from lift.types.arith import ArithExpr
from lift.types.types import ArrayType, Bool, Float, Int, ScalarType, TupleType, Type, VectorType, literal_type

_MATH_BY_FUNCTION = {getattr(math, name): name for name in MATH_FUNCTIONS if hasattr(math, name)}
_MATH_BY_FUNCTION.update({function: name for name, function in LIFT_MATH.items()})
_BUILTIN_FUNCTIONS = {builtins.abs: "abs", builtins.min: "min", builtins.max: "max"}
_BUILTIN_CONVERSIONS = {builtins.float: Float, builtins.int: Int}

_ARITHMETIC = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Mod: "%", ast.Pow: "**"}
_BITWISE = {ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^", ast.LShift: "<<", ast.RShift: ">>"}
_COMPARISONS = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}

_UNSUPPORTED = {
    ast.While: "`while` loops", ast.AsyncFor: "`async for` loops", ast.With: "`with` blocks", ast.Try: "`try` blocks",
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


def typed_body(fun, in_types: tuple, out_type: Type) -> tuple:
    """The typed statements of `fun` for the given types, and the type of each local.

    A local's type is the widest type assigned to it, so typing repeats until no local widens.
    """
    local_types: dict = {}
    while True:
        typer = Typer(fun, in_types, out_type, local_types)
        body = typer.function_body()
        if typer.locals == local_types:
            return body, local_types
        local_types = typer.locals


class Typer:
    """Types one pass over a function's `ast`, with the locals' types of the previous pass."""

    def __init__(self, fun, in_types: tuple, out_type: Type, local_types: dict):
        self.fun = fun
        self.params = dict(zip(fun.param_names, in_types))
        self.out_type = out_type
        self.locals = dict(local_types)
        self.defined = set(self.params)
        self.mask_width: Optional[int] = None  # the lane count of the vector condition around a statement
        self.loop_depth = 0
        self.loop_vars: set = set()
        self.assigned = {n.id for n in ast.walk(fun.definition) if isinstance(n, ast.Name)
                         and isinstance(n.ctx, ast.Store)}
        self.scope = ModuleScope(fun, self.assigned | set(self.params), self.error)

    def error(self, node, message: str) -> LiftTypeError:
        return LiftTypeError(f"user function {self.fun.name}, line {node.lineno + self.fun.first_line - 1}: "
                             f"{message}")

    def unsupported(self, node) -> LiftTypeError:
        what = _UNSUPPORTED.get(type(node)) or f"constructs like `{ast.unparse(node)}`"
        return self.error(node, f"{what} are not supported in user functions")

    # statements

    def function_body(self) -> tuple:
        stmts = self.fun.definition.body
        if isinstance(stmts[0], ast.Expr) and isinstance(stmts[0].value, ast.Constant) \
                and isinstance(stmts[0].value.value, str):
            stmts = stmts[1:]
        body = self.block(_early_returns(stmts))
        if not returns(body):
            raise self.error(stmts[-1] if stmts else self.fun.definition, "the function must end with a `return`")
        return body

    def block(self, stmts: list) -> tuple:
        out = []
        for stmt in stmts:
            if returns(out):
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
        if isinstance(stmt, ast.For):
            return self.for_statement(stmt)
        if isinstance(stmt, ast.Return):
            if stmt.value is None:
                raise self.error(stmt, "`return` needs a value")
            if self.loop_depth:
                raise self.error(stmt, "`return` inside a `for` loop is not supported: assign a local in the "
                                       "loop and return it after the loop")
            return Return(self.result(stmt.value))
        raise self.unsupported(stmt)

    def assign(self, node, name: str, value) -> Assign:
        if name in self.params:
            t = self.params[name]
            if self.mask_width and self.widen(node, t, self.mask_width) != t:
                raise self.error(node, f"the parameter `{name}` of type {t} cannot be assigned under a vector "
                                       "condition")
        else:
            check_c_name(name, lambda message: self.error(node, message))
            t = self.join(node, self.locals.get(name, value.type), value.type)
            if self.mask_width:
                t = self.widen(node, t, self.mask_width)
            if isinstance(t, ArrayType):
                raise self.error(node, f"`{name}`: locals cannot hold arrays")
            self.locals[name] = t
        self.defined.add(name)
        return Assign(name, self.convert(node, value, t))

    def if_statement(self, stmt: ast.If) -> If:
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
        if returns(then) != returns(other):
            raise self.error(stmt, "only one branch of this `if` returns: the function must return on every path")
        self.defined = before | (then_defined & other_defined)
        changed = assigned(then).keys() | assigned(other).keys()
        merged = tuple((n, self.type_of(n)) for n in sorted(self.defined & changed))
        return If(cond, then, other, () if returns(then) else merged, returns(then))

    def for_statement(self, stmt: ast.For) -> For:
        """`for i in range(...)`: the bounds are Int values, the step an Int constant other than zero."""
        if stmt.orelse:
            raise self.error(stmt, "`for ... else` is not supported in user functions")
        if not isinstance(stmt.target, ast.Name):
            raise self.error(stmt, "the loop variable must be one name (`for i in range(...)`)")
        var = stmt.target.id
        iterator = stmt.iter
        if not (isinstance(iterator, ast.Call) and isinstance(iterator.func, ast.Name)
                and self.scope.is_static(iterator.func) and self.scope.lookup(iterator.func.id) is builtins.range):
            raise self.error(stmt, f"user functions loop over `range(...)` only, not over `{ast.unparse(iterator)}`")
        if iterator.keywords or not 1 <= len(iterator.args) <= 3:
            raise self.error(stmt, "`range` takes one to three arguments: `range(stop)`, `range(start, stop)` or "
                                   "`range(start, stop, step)`")
        if var in self.params or var in self.defined or var in self.loop_vars:
            raise self.error(stmt, f"the loop variable `{var}` is already a parameter, a local or a loop variable")
        if any(isinstance(n, ast.Name) and n.id == var and isinstance(n.ctx, ast.Store)
               for s in stmt.body for n in ast.walk(s)):
            raise self.error(stmt, f"the loop variable `{var}` cannot be assigned in the loop")
        check_c_name(var, lambda message: self.error(stmt, message))
        bounds = [self.expr(a) for a in iterator.args]
        for a, b in zip(iterator.args, bounds):
            if b.type != Int:
                raise self.error(a, f"`range` needs Int bounds, not {b.type} (`{ast.unparse(a)}`): convert with "
                                    f"`int(...)`")
        start, stop, step = (Const(0, Int), bounds[0], Const(1, Int)) if len(bounds) == 1 else \
            (bounds[0], bounds[1], bounds[2] if len(bounds) == 3 else Const(1, Int))
        if not isinstance(step, Const) or step.value == 0:
            raise self.error(stmt, "the step of `range` must be an integer constant other than zero")
        before = self.defined
        self.defined = set(before) | {var}
        self.locals[var] = Int
        self.loop_depth += 1
        self.loop_vars.add(var)
        try:
            body = self.block(stmt.body)
        finally:
            self.loop_depth -= 1
            self.loop_vars.discard(var)
        self.defined = before
        merged = tuple((n, self.type_of(n)) for n in assigned(body) if n in before)
        return For(var, start, stop, step.value, body, merged)

    def result(self, node):
        if isinstance(node, ast.Tuple) and not isinstance(self.out_type, TupleType):
            raise self.error(node, f"returns a tuple, but the result type is {self.out_type}")
        if self.mask_width and not _has_lanes(self.out_type, self.mask_width):
            raise self.error(node, f"a {self.out_type} result cannot be returned under a vector condition")
        if isinstance(node, ast.Tuple) and isinstance(self.out_type, TupleType):
            if len(node.elts) != len(self.out_type.elems):
                raise self.error(node, f"returns {len(node.elts)} values for the result type {self.out_type}")
            return MakeTuple(tuple(self.convert(e, self.expr(e), t) for e, t in zip(node.elts, self.out_type.elems)),
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
            return Variable(name, self.type_of(name))
        if name in self.assigned:
            raise self.error(node, f"`{name}` is used before it is assigned")
        value = self.scope.static(node)
        if isinstance(value, ArithExpr) and not value.is_constant:
            return self.size(node, value)
        return self.constant(node, value, name)

    def size(self, node, size: ArithExpr):
        """A size variable of the module: the length of the first array parameter declared with that length."""
        for param, t in self.params.items():
            if isinstance(t, ArrayType) and t.length == size:
                return Length(param, Int)
        raise self.error(node, f"the size {size} is not the length of an array parameter: a user function knows "
                               f"the sizes of its array parameters only (declare one as ArrayType(..., {size}))")

    def type_of(self, name: str) -> Type:
        return self.params[name] if name in self.params else self.locals[name]

    def expr_Attribute(self, node: ast.Attribute):
        if self.scope.is_static(node.value):
            return self.constant(node, self.scope.static(node), ast.unparse(node))
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
            if isinstance(t.elem, ArrayType) and not t.elem.length.is_constant:
                raise self.error(node, f"a row of {t} has no constant length: only the outermost dimension of an "
                                       f"array indexed in a user function may be a size variable")
            return Index(value, index, t.elem)
        if not isinstance(t, (TupleType, VectorType)):
            raise self.error(node, f"a value of type {t} cannot be indexed")
        if not (isinstance(index, Const) and index.type == Int):
            raise self.error(node, f"the index of a {t} must be an integer constant")
        size = len(t.elems) if isinstance(t, TupleType) else t.width
        if not -size <= index.value < size:
            raise self.error(node, f"index {index.value} is out of range for {t}")
        if isinstance(t, VectorType):
            return self.component(node, value, index.value % size)
        return Field(value, index.value % size, t.elems[index.value % size])

    def component(self, node, vector, index: int) -> Component:
        if index >= vector.type.width:
            raise self.error(node, f"{vector.type} has no component {index}")
        return Component(vector, index, vector.type.elem)

    def expr_Tuple(self, node: ast.Tuple):
        raise self.unsupported(node)

    def expr_BinOp(self, node: ast.BinOp):
        return self.binary(node, node.op, self.expr(node.left), self.expr(node.right))

    def binary(self, node, op: ast.operator, left, right):
        if type(op) in _BITWISE:
            return self.bitwise(node, _BITWISE[type(op)], left, right)
        if type(op) not in _ARITHMETIC:
            hint = " (`/` divides Int values as C does, truncating toward zero)" if isinstance(op, ast.FloorDiv) else ""
            raise self.error(node, f"the operator `{_operator_symbol(op)}` is not supported in user functions{hint}")
        symbol = _ARITHMETIC[type(op)]
        if symbol == "**":
            if isinstance(right, Const) and right.value == 2:
                return self.binary(node, ast.Mult(), left, left)
            return self.math_call(node, "pow", [left, right])
        t = self.arithmetic_type(node, symbol, left.type, right.type)
        left, right = self.convert(node, left, t), self.convert(node, right, t)
        if isinstance(left, Const) and isinstance(right, Const):
            try:
                return Const(fold(symbol, left.value, right.value, t), t)
            except ZeroDivisionError:
                raise self.error(node, "division by zero") from None
        return Binary(symbol, left, right, t)

    def bitwise(self, node, symbol: str, left, right):
        """`& | ^ << >>` on Int values (scalars or vectors), as OpenCL C computes them on 32-bit `int`: a shift by
        its count modulo 32, `>>` arithmetic (numpy's too), `<<` wrapping."""
        for value in (left, right):
            if not (is_number(value.type) and lanes_scalar(value.type) == Int):
                raise self.error(node, f"`{symbol}` needs Int values, not a value of type {value.type}")
        t = self.arithmetic_type(node, symbol, left.type, right.type)
        left, right = self.convert(node, left, t), self.convert(node, right, t)
        if isinstance(left, Const) and isinstance(right, Const):
            return Const(int(bitwise_numpy(symbol, np.int32(left.value), np.int32(right.value))), t)
        return Binary(symbol, left, right, t)

    def expr_UnaryOp(self, node: ast.UnaryOp):
        if isinstance(node.op, ast.Not):
            operand = self.truth(node, self.expr(node.operand))
            return Unary("!", operand, operand.type)
        operand = self.expr(node.operand)
        if isinstance(node.op, ast.Invert):
            if not (is_number(operand.type) and lanes_scalar(operand.type) == Int):
                raise self.error(node, f"`~` needs an Int value, not a value of type {operand.type}")
            if isinstance(operand, Const):
                return Const(~operand.value, operand.type)
            return Unary("~", operand, operand.type)
        self.arithmetic_type(node, "-", operand.type, operand.type)
        if isinstance(node.op, ast.UAdd):
            return operand
        if isinstance(operand, Const):
            return Const(-operand.value, operand.type)
        return Unary("-", operand, operand.type)

    def expr_Compare(self, node: ast.Compare):
        operands = [self.expr(node.left)] + [self.expr(c) for c in node.comparators]
        tests = [self.compare(node, op, a, b) for op, a, b in zip(node.ops, operands, operands[1:])]
        return reduce(lambda a, b: self.logic(node, "and", a, b), tests)

    def compare(self, node, op: ast.cmpop, left, right) -> Binary:
        if type(op) not in _COMPARISONS:
            raise self.error(node, f"the comparison `{_operator_symbol(op)}` is not supported in user functions")
        symbol = _COMPARISONS[type(op)]
        t = self.join(node, left.type, right.type)
        if not is_number(t) and not (is_bool(t) and symbol in ("==", "!=")):
            raise self.error(node, f"`{symbol}` cannot compare values of type {t}")
        return Binary(symbol, self.convert(node, left, t), self.convert(node, right, t), _bool_like(t))

    def expr_BoolOp(self, node: ast.BoolOp):
        op = "and" if isinstance(node.op, ast.And) else "or"
        return reduce(lambda a, b: self.logic(node, op, a, b), [self.expr(v) for v in node.values])

    def logic(self, node, op: str, left, right) -> Binary:
        left, right = self.truth(node, left), self.truth(node, right)
        t = self.join(node, left.type, right.type)
        return Binary(op, self.convert(node, left, t), self.convert(node, right, t), t)

    def condition(self, node):
        return self.truth(node, self.expr(node))

    def truth(self, node, value):
        """A condition as a Bool (or a lane mask): numbers are true when not zero, as in C and Python."""
        if is_bool(value.type):
            return value
        if not is_number(value.type):
            raise self.error(node, f"a value of type {value.type} cannot be a condition")
        return Binary("!=", value, self.convert(node, Const(0, Int), value.type), _bool_like(value.type))

    def expr_IfExp(self, node: ast.IfExp):
        cond = self.condition(node.test)
        then, other = self.expr(node.body), self.expr(node.orelse)
        t = self.join(node, then.type, other.type)
        if isinstance(cond.type, VectorType):
            t = self.widen(node, t, cond.type.width)
        return Select(cond, self.convert(node, then, t), self.convert(node, other, t), t)

    def expr_Call(self, node: ast.Call):
        function = ast.unparse(node.func)
        if node.keywords:
            raise self.error(node, f"`{function}`: keyword arguments are not supported in user functions")
        if isinstance(node.func, ast.Name) and self.scope.is_static(node.func) \
                and self.scope.lookup(node.func.id) is MISSING:
            raise self.error(node, f"unknown function `{function}`")
        callee = self.scope.static(node.func) if self.scope.is_static(node.func) else None
        if not callable(callee):
            raise self.error(node, f"`{function}` is not a function")
        args = [self.expr(a) for a in node.args]
        if callee is builtins.len:
            return self.length(node, args)
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
            return MakeVector(tuple(self.convert(node, a, callee.elem) for a in args), callee)
        raise self.error(node, f"`{function}` cannot be called in user functions; they can call math functions "
                               f"(`math.sqrt`, ...), `abs`, `min`, `max`, `float`, `int` and lift types")

    def length(self, node, args: list):
        """`len(a)` of an array parameter: the length its type declares where it is a constant, else the length
        of the argument (`Length`: the interpreter's array has it, the kernel passes it)."""
        if len(args) != 1 or not isinstance(args[0].type, ArrayType):
            raise self.error(node, "`len` takes one array")
        length = args[0].type.length
        if length.is_constant:
            return Const(length.value, Int)
        if not isinstance(args[0], Variable):
            raise self.error(node, f"`len` of a row of symbolic length {length}: only an array parameter's length "
                                   f"may be a size variable")
        return Length(args[0].name, Int)

    def math_call(self, node, name: str, args: list) -> Call:
        arity = MATH_FUNCTIONS[name]
        if len(args) != arity:
            raise self.error(node, f"`math.{name}` takes {arity} argument{'s' if arity > 1 else ''}")
        t = reduce(lambda a, b: self.arithmetic_type(node, name, a, b), [a.type for a in args], Float)
        return Call(name, tuple(self.convert(node, a, t) for a in args), t)

    def builtin_call(self, node, name: str, args: list) -> Call:
        if name == "abs":
            if len(args) != 1:
                raise self.error(node, "`abs` takes one argument")
            return Call("abs", tuple(args), self.arithmetic_type(node, "abs", args[0].type, args[0].type))
        if len(args) < 2:
            raise self.error(node, f"`{name}` takes two or more arguments")

        def pair(a, b):
            t = self.arithmetic_type(node, name, a.type, b.type)
            return Call(name, (self.convert(node, a, t), self.convert(node, b, t)), t)

        return reduce(pair, args)

    # constants of the function's module (`lift.ir.userfun_scope` resolves its names)

    def constant(self, node, value, text: str) -> Const:
        if not isinstance(value, (bool, int, float, np.bool_, np.integer, np.floating)):
            raise self.error(node, f"`{text}` is not a number: user functions can use their module's numeric "
                                   "constants, not other objects")
        t = literal_type(value)
        if t == Int and not -2**31 <= value < 2**31:
            raise self.error(node, f"{value} does not fit in an Int")
        return Const(_python_value(value, t), t)

    # types

    def arithmetic_type(self, node, op: str, a: Type, b: Type) -> Type:
        """The type of arithmetic on `a` and `b`: the wider scalar, with the lanes of the vector operand."""
        for t in (a, b):
            if not is_number(t):
                raise self.error(node, f"`{op}` needs numbers, not a value of type {t}")
        widths = {t.width for t in (a, b) if isinstance(t, VectorType)}
        if len(widths) > 1:
            raise self.error(node, f"`{op}` on vectors of different widths: {a} and {b}")
        elem = max(lanes_scalar(a), lanes_scalar(b), key=NUMBER_RANK.get)
        return VectorType(elem, widths.pop()) if widths else elem

    def join(self, node, a: Type, b: Type) -> Type:
        """The type that holds values of both `a` and `b` (the branches of a condition, a re-assigned local)."""
        if a == b:
            return a
        if is_bool(a) and is_bool(b):
            return self.widen(node, b, a.width) if isinstance(a, VectorType) else self.widen(node, a, b.width)
        if is_number(a) and is_number(b):
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
            return Convert(self.convert(node, value, t.elem), t)
        if is_number(source) and is_number(t) and isinstance(source, VectorType) == isinstance(t, VectorType) \
                and getattr(source, "width", None) == getattr(t, "width", None):
            if isinstance(value, Const):
                return Const(_python_value(value.value, t), t)
            return Convert(value, t)
        raise self.error(node, f"a value of type {source} where {t} is expected")


def _operator_symbol(op) -> str:
    symbols = {ast.FloorDiv: "//", ast.MatMult: "@", ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^",
               ast.LShift: "<<", ast.RShift: ">>", ast.Is: "is", ast.IsNot: "is not", ast.In: "in",
               ast.NotIn: "not in"}
    return symbols.get(type(op), type(op).__name__)


def _bool_like(t: Type) -> Type:
    """The type of a comparison of `t` values: Bool, or a lane mask for vectors."""
    return VectorType(Bool, t.width) if isinstance(t, VectorType) else Bool


def _has_lanes(t: Type, width: int) -> bool:
    if isinstance(t, TupleType):
        return all(_has_lanes(e, width) for e in t.elems)
    return isinstance(t, VectorType) and t.width == width


def _python_value(value, t: Type):
    t = lanes_scalar(t)
    return bool(value) if t == Bool else int(value) if t == Int else float(value)


def fold(op: str, a, b, t: Type):
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
