"""The typed body of a user function written in Python: what the front end (`lift.ir.userfun_typing`) makes
of its `ast`, what the numpy evaluator (`lift.ir.userfun_numpy`) runs and the C writer
(`lift.opencl_gen.userfun_c`) prints.

Statements are `Assign`, `If`, `For` and `Return`, and `SinCos` (only rule `userfun-sincos` writes it); every
expression node carries its type, a scalar, vector or tuple type (vectors of `Bool` are lane masks).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Optional

from lift.types.types import Bool, Double, Float, Int, ScalarType, Type, VectorType

# The math functions that user functions may call, by name, with their arity: Python's `math` has them (but
# `fmin` and `fmax`), lift has them all (`lift.sqrt`, `lift.fmin`, also on IR values), OpenCL C has functions
# of the same names.
MATH_FUNCTIONS = {
    "sqrt": 1, "exp": 1, "expm1": 1, "log": 1, "log2": 1, "log10": 1, "log1p": 1, "sin": 1, "cos": 1, "tan": 1,
    "asin": 1, "acos": 1, "atan": 1, "sinh": 1, "cosh": 1, "tanh": 1, "asinh": 1, "acosh": 1, "atanh": 1,
    "floor": 1, "ceil": 1, "trunc": 1, "fabs": 1, "erf": 1, "pow": 2, "atan2": 2, "fmod": 2, "hypot": 2,
    "copysign": 2, "fmin": 2, "fmax": 2,
}
NUMBER_RANK = {Int: 0, Float: 1, Double: 2}


@dataclass(frozen=True)
class Const:
    """A constant: a Python bool, int or float of a scalar type."""

    value: object
    type: Type


@dataclass(frozen=True)
class Variable:
    """A parameter or a local."""

    name: str
    type: Type


@dataclass(frozen=True)
class Unary:
    """`-x` or `!x`."""

    op: str  # "-" or "!"
    operand: object
    type: Type


@dataclass(frozen=True)
class Binary:
    """Arithmetic (`+ - * / %`), a comparison, or `and`/`or`; lane-wise on vectors."""

    op: str  # + - * / % < <= > >= == != and or
    left: object
    right: object
    type: Type


@dataclass(frozen=True)
class Select:
    """`then if cond else other`; lane by lane when `cond` is a lane mask."""

    cond: object
    then: object
    other: object
    type: Type


@dataclass(frozen=True)
class Call:
    """A math function (a key of `MATH_FUNCTIONS`) or `abs`, `min`, `max`."""

    name: str
    args: tuple
    type: Type


@dataclass(frozen=True)
class Convert:
    """A conversion to `type`: between scalars, scalar to vector (a broadcast), or lane-wise."""

    operand: object
    type: Type


@dataclass(frozen=True)
class MakeVector:
    """A vector built from its lanes."""

    elems: tuple
    type: Type


@dataclass(frozen=True)
class Component:
    """One lane of a vector."""

    operand: object  # a vector
    index: int
    type: Type


@dataclass(frozen=True)
class Field:
    """One component of a tuple."""

    operand: object  # a tuple
    index: int
    type: Type


@dataclass(frozen=True)
class Index:
    """One element of an array parameter."""

    array: object
    index: object
    type: Type


@dataclass(frozen=True)
class Length:
    """`len(a)` of an array parameter of symbolic length: the kernel passes the length (an Int) along."""

    array: str
    type: Type


@dataclass(frozen=True)
class MakeTuple:
    """A tuple result, built in a `return` statement."""

    elems: tuple
    type: Type


@dataclass(frozen=True)
class Assign:
    """`name = value`."""

    name: str
    value: object


@dataclass(frozen=True)
class If:
    """An `if` statement; on a lane mask both branches run, lane by lane."""

    cond: object
    then: tuple
    other: tuple
    merged: tuple  # (name, type) of the variables assigned in a branch and defined after the `if`
    returns: bool  # both branches return


@dataclass(frozen=True)
class For:
    """`for var in range(start, stop, step)`: `var` an Int local of the loop, `step` a non-zero Int constant.

    The body assigns locals (no `return`); `merged` are (name, type) of those defined before the loop, whose
    values the loop carries on (accumulators). Locals first assigned in the body stay inside it.
    """

    var: str
    start: object
    stop: object
    step: int
    body: tuple
    merged: tuple


@dataclass(frozen=True)
class SinCos:
    """`sin, cos = sin(angle), cos(angle)`: two new locals of `angle`'s (floating-point) type, computed by one call
    of OpenCL's `sincos` (`lift.ir.userfun_sincos`)."""

    angle: object
    sin: str
    cos: str


@dataclass(frozen=True)
class Return:
    """`return value`."""

    value: object


def lanes_scalar(t: Type) -> ScalarType:
    """The scalar type of a scalar, or of a vector's lanes."""
    return t.elem if isinstance(t, VectorType) else t


def is_number(t: Type) -> bool:
    """Whether `t` is an Int, Float or Double scalar or vector."""
    return isinstance(t, (ScalarType, VectorType)) and lanes_scalar(t) in NUMBER_RANK


def is_bool(t: Type) -> bool:
    """Whether `t` is a Bool or a lane mask."""
    return isinstance(t, (ScalarType, VectorType)) and lanes_scalar(t) == Bool


def returns(stmts) -> bool:
    """Whether typed statements end in a `return` on every path."""
    last = stmts[-1] if stmts else None
    return isinstance(last, Return) or isinstance(last, If) and last.returns


def assigned(stmts) -> dict:
    """The names assigned in typed statements, in order of first assignment (a dict used as ordered set)."""
    names = {}
    for stmt in stmts:
        if isinstance(stmt, Assign):
            names[stmt.name] = None
        elif isinstance(stmt, SinCos):
            names.update({stmt.sin: None, stmt.cos: None})
        elif isinstance(stmt, If):
            names.update(assigned(stmt.then))
            names.update(assigned(stmt.other))
        elif isinstance(stmt, For):
            names.update(assigned(stmt.body))
    return names


def trip_count(loop: For) -> Optional[int]:
    """The iterations of a loop whose bounds are constants; None otherwise."""
    if isinstance(loop.start, Const) and isinstance(loop.stop, Const):
        return len(range(loop.start.value, loop.stop.value, loop.step))
    return None


def parts(node) -> tuple:
    """The statements and expressions a statement or expression holds (its fields but its type), or none: the
    children that the walks over a typed body visit."""
    if not hasattr(node, "__dataclass_fields__"):
        return ()
    return tuple(getattr(node, f) for f in node.__dataclass_fields__ if f != "type")


def lengths_read(node) -> dict:
    """The array parameters whose symbolic length (`Length`) typed statements read, in order (an ordered set)."""
    if isinstance(node, tuple):
        out = {}
        for n in node:
            out.update(lengths_read(n))
        return out
    if isinstance(node, Length):
        return {node.array: None}
    return lengths_read(parts(node))


def flops_of(node, call_weights: Mapping[str, int] = {}) -> int:
    """The floating-point operations in a typed statement or expression (see `PythonUserFun.flops`); a call of a
    function named in `call_weights` counts as that many."""
    if isinstance(node, tuple):
        return sum(flops_of(n, call_weights) for n in node)
    if isinstance(node, For):  # a loop with symbolic bounds counts as one iteration
        trips = trip_count(node)
        return flops_of(node.body, call_weights) * (1 if trips is None else trips)
    own = 0
    if isinstance(node, Call) and lanes_scalar(node.type) in (Float, Double):
        own = call_weights.get(node.name, 1)
    elif isinstance(node, SinCos):  # the two functions' work, in one call
        own = call_weights.get("sin", 1) + call_weights.get("cos", 1)
    elif isinstance(node, Binary) and lanes_scalar(node.type) in (Float, Double):
        own = 1 if node.op in ("+", "-", "*", "/", "%", "**") else 0
    return own + sum(flops_of(p, call_weights) for p in parts(node))


def counter_indexed_reads(node, counters: frozenset = frozenset(), times: int = 1) -> dict:
    """The reads of each array parameter's elements at an index a loop's counter varies (`a[i]` in a loop over
    `i`; not `a[1]`), in typed statements or an expression: as often as the loops around them run (a loop with
    symbolic bounds counting once). An OpenCL compiler keeps a private array read only at constant indices in
    registers; indexed by a counter, it lives in memory (`lift.explore.cost_model`)."""
    if isinstance(node, tuple):
        out: dict = {}
        for n in node:
            for name, count in counter_indexed_reads(n, counters, times).items():
                out[name] = out.get(name, 0) + count
        return out
    if isinstance(node, For):
        return counter_indexed_reads(node.body, counters | {node.var}, times * (trip_count(node) or 1))
    if isinstance(node, Index):
        root, indices = node, []
        while isinstance(root, Index):
            root, indices = root.array, indices + [root.index]
        out = counter_indexed_reads(tuple(indices), counters, times)
        if any(_reads_variable(i, counters) for i in indices):
            out[root.name] = out.get(root.name, 0) + times
        return out
    return counter_indexed_reads(parts(node), counters, times)


def _reads_variable(node, names: frozenset) -> bool:
    """Whether an expression reads a variable of `names`."""
    if isinstance(node, Variable):
        return node.name in names
    if isinstance(node, tuple):
        return any(_reads_variable(n, names) for n in node)
    return any(_reads_variable(p, names) for p in parts(node))
