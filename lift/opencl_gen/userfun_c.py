"""OpenCL C of user functions: the typed body of a function written in Python (`lift.ir.userfun_body`)
printed as C statements, for its declared types or for the vector types of `vectorize-n(f)`.

On vectors, conditions are lane masks: conditional expressions become `select`, and `if` statements
assign (and return) lane by lane. A function that reads the symbolic length of an array parameter (`len(a)`)
takes it as one more Int parameter per array, after its own (`length_params`); the call passes it.
"""

from __future__ import annotations

import math
from typing import Optional

from lift.errors import LiftTypeError
from lift.ir.userfun import UserFun
from lift.ir.userfun_body import (Assign, Binary, Call, Component, Const, Convert, Field, For, If, Index, Length,
                                  MakeTuple, MakeVector, Return, Select, SinCos, Unary, Variable, assigned,
                                  lanes_scalar, lengths_read)
from lift.opencl_gen.c_types import c_type_name
from lift.types.types import ArrayType, Bool, Float, Int, ScalarType, TupleType, Type, VectorType, tuple_field


def userfun_c_body(f: UserFun, in_types: Optional[tuple] = None, out_type: Optional[Type] = None) -> str:
    """The C body of a user function for its declared types, or for the vector types of `vectorize-n(f)`:
    written from its typed body when it was written in Python, else its own C text."""
    if f.origin is not None:
        return python_userfun_c(f.origin, in_types, out_type)
    return f.body


def length_params(fun) -> tuple:
    """`(array parameter, C name)` of each array parameter whose symbolic length the body of a `PythonUserFun`
    (a `UserFun`'s `origin`; None for a C body) reads (`len(a)`): its C function takes each length as an `int`
    parameter of that name, after its own."""
    if fun is None:
        return ()
    arrays = lengths_read(fun.body)
    if not arrays:
        return ()
    taken = set(fun.param_names) | set(fun.typed(fun.in_types, fun.out_type)[1])
    out = []
    for a in arrays:
        name = next(n for n in (f"{a}_length{'_' * i}" for i in range(len(taken) + 1)) if n not in taken)
        taken.add(name)
        out.append((a, name))
    return tuple(out)


def python_userfun_c(fun, in_types: Optional[tuple] = None, out_type: Optional[Type] = None) -> str:
    """The OpenCL C statements of a `PythonUserFun`'s body, for its declared types or substituted (vector) ones."""
    in_types = fun.in_types if in_types is None else tuple(in_types)
    out_type = fun.out_type if out_type is None else out_type
    if len(in_types) != len(fun.param_names):
        raise LiftTypeError(f"user function {fun.name}: {len(fun.param_names)} parameters, "
                            f"{len(in_types)} types given")
    body, local_types = fun.typed(in_types, out_type)
    return _CWriter(fun.param_names, out_type, local_types, dict(length_params(fun))).write(body)


_PRIMARY, _UNARY, _CONDITIONAL = 16, 14, 3
_C_PRECEDENCE = {"or": 4, "and": 5, "|": 6, "^": 7, "&": 8, "==": 9, "!=": 9, "<": 10, "<=": 10, ">": 10, ">=": 10,
                 "<<": 11, ">>": 11, "+": 12, "-": 12, "*": 13, "/": 13, "%": 13}
_C_OPERATORS = {"and": "&&", "or": "||"}


def _c_type(t: Type) -> str:
    """The C type of a local: lane masks are int vectors, as OpenCL's vector comparisons give."""
    if isinstance(t, VectorType) and t.elem == Bool:
        return f"int{t.width}"
    return c_type_name(t)


def _broadcast(e):
    """The scalar that `e` broadcasts to a vector of the same element type, or None."""
    if isinstance(e, Convert) and isinstance(e.operand.type, ScalarType) and e.operand.type == lanes_scalar(e.type):
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

    def __init__(self, param_names: tuple, out_type: Type, local_types: dict, lengths: dict):
        self.out_type = out_type
        self.local_types = local_types
        self.lengths = lengths
        self.declared = set(param_names)
        names = set(param_names) | set(local_types) | set(lengths.values())
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
            if isinstance(stmt, Assign):
                self.assign(stmt, mask)
            elif isinstance(stmt, If):
                self.if_statement(stmt, mask)
            elif isinstance(stmt, For):
                self.for_statement(stmt, mask)
            elif isinstance(stmt, SinCos):
                self.sincos(stmt)
            else:
                self.return_statement(stmt, mask)

    def assign(self, stmt: Assign, mask: Optional[str]):
        value = self.expr(stmt.value)
        if mask:
            value = f"select({stmt.name}, {value}, {mask})"
        self.assigned(stmt.name, value)

    def assigned(self, name: str, value: str):
        """`name = value;`, declaring the local `name` where this is its first assignment."""
        if name in self.declared:
            self.line(f"{name} = {value};")
        else:
            self.declared.add(name)
            self.line(f"{_c_type(self.local_types[name])} {name} = {value};")

    def sincos(self, stmt: SinCos):
        """OpenCL's `sin = sincos(angle, &cos)`; computed whatever the mask, its locals are new."""
        if stmt.cos not in self.declared:
            self.declared.add(stmt.cos)
            self.line(f"{_c_type(self.local_types[stmt.cos])} {stmt.cos};")
        self.assigned(stmt.sin, f"sincos({self.expr(stmt.angle)}, &{stmt.cos})")

    def if_statement(self, stmt: If, mask: Optional[str]):
        vector = isinstance(stmt.cond.type, VectorType)
        for name in assigned((stmt,)) if vector else [name for name, _ in stmt.merged]:
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

    def for_statement(self, stmt: For, mask: Optional[str]):
        i = stmt.var
        test = "<" if stmt.step > 0 else ">"
        step = f"{i}++" if stmt.step == 1 else f"{i} += {stmt.step}" if stmt.step > 0 else f"{i} -= {-stmt.step}"
        stop = self.expr(stmt.stop, _C_PRECEDENCE[test] + 1)
        self.line(f"for (int {i} = {self.expr(stmt.start)}; {i} {test} {stop}; {step}) {{")
        self.nested(stmt.body, mask)
        self.line("}")

    def nested(self, stmts: tuple, mask: Optional[str]):
        """A C block: the locals it declares are not declared after it."""
        declared = set(self.declared)
        self.depth += 1
        self.block(stmts, mask)
        self.depth -= 1
        self.declared = declared

    def return_statement(self, stmt: Return, mask: Optional[str]):
        value = stmt.value
        if mask is None and not isinstance(value, MakeTuple):
            self.line(f"return {self.expr(value)};")
            return
        if mask is None:
            self.line(f"{_c_type(self.out_type)} {self.result};")
        if isinstance(self.out_type, TupleType):
            targets = [f"{self.result}.{tuple_field(i)}" for i in range(len(self.out_type.elems))]
            values = [self.expr(e) for e in value.elems] if isinstance(value, MakeTuple) else \
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
            case Const(value, t):
                text = _c_literal(value, t)
                return text, _UNARY if text.startswith("-") else _PRIMARY
            case Variable(name, _):
                return name, _PRIMARY
            case Length(array, _):
                return self.lengths[array], _PRIMARY
            case Unary(op, x, _):
                inner = self.expr(x, _UNARY)
                return op + (f"({inner})" if inner.startswith("-") else inner), _UNARY
            case Binary(op, left, right, _):
                if not (_broadcast(left) and _broadcast(right)):  # OpenCL broadcasts a scalar operand itself
                    left, right = _broadcast(left) or left, _broadcast(right) or right
                p = _C_PRECEDENCE[op]
                return f"{self.expr(left, p)} {_C_OPERATORS.get(op, op)} {self.expr(right, p + 1)}", p
            case Select(cond, then, other, _) if isinstance(cond.type, VectorType):
                return f"select({self.expr(other)}, {self.expr(then)}, {self.expr(cond)})", _PRIMARY
            case Select(cond, then, other, _):
                return (f"{self.expr(cond, _CONDITIONAL + 1)} ? {self.expr(then)} : "
                        f"{self.expr(other, _CONDITIONAL)}"), _CONDITIONAL
            case Call(name, args, t):
                return self.call(name, [self.expr(a) for a in args], t)
            case Convert(x, t):
                return self.conversion(x, t)
            case MakeVector(elems, t):
                return f"({c_type_name(t)})({', '.join(self.expr(x) for x in elems)})", _UNARY
            case Component(x, i, _):
                name = "xyzw"[i] if x.type.width <= 4 else f"s{i:X}"
                return f"{self.expr(x, _PRIMARY)}.{name}", _PRIMARY
            case Field(x, i, _):
                return f"{self.expr(x, _PRIMARY)}.{tuple_field(i)}", _PRIMARY
            case Index(array, index, _):
                offset, constant = self.expr(index), index.value if isinstance(index, Const) else None
                while isinstance(array, Index):  # a[i][j]: the arrays are flat, rows of constant length
                    stride = _scalars_in(array.type)
                    if constant is not None and isinstance(array.index, Const):  # an unrolled loop's a[1][2]
                        constant += array.index.value * stride
                        offset = str(constant)
                    else:
                        constant = None
                        offset = f"{self.expr(array.index, _PRIMARY)} * {stride} + {offset}"
                    array = array.array
                return f"{self.expr(array, _PRIMARY)}[{offset}]", _PRIMARY
        raise AssertionError(f"no C for {e}")

    def call(self, name: str, args: list, t: Type) -> tuple:
        integer = lanes_scalar(t) == Int
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


def _scalars_in(t: Type) -> int:
    """The number of elements of a (multi-dimensional) row of constant lengths: its stride in a flat buffer."""
    n = 1
    while isinstance(t, ArrayType):
        n, t = n * t.length.eval({}), t.elem
    return n
