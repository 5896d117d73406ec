"""A user function of vectors as a user function of their components (struct of arrays).

A user function written in Python whose parameters or result are vectors (N-body's `accelerate(p: float4,
q: float4, eps2)`) computes each lane of a vector expression from lanes of its operands: its typed body
(`lift.ir.userfun_body`) has lane-wise arithmetic, comparisons, selects, math calls and conversions, vectors
built from scalars (`MakeVector`) and lanes read from vectors (`Component`). So the same body written on
scalars, a vector parameter `p: floatN` becoming `N` scalar parameters `p_x, p_y, ..` and a vector result (or a
tuple of vectors and scalars) a flat tuple of scalars, computes the same numbers:

    u(p, q, e) = pack(u_soa(p.x, .., p.w, q.x, .., q.w, e))        (pack: a flat tuple back into vectors)

Written on scalars, `u_soa` vectorises *across* elements (`vect-n(u_soa)`, a lane per element), which `u` cannot:
its lanes are the components of one element. The scalar body is printed as Python and translated like any user
function (`lift.ir.python_userfun`), so that it is typed, evaluated by numpy and vectorised as written by hand.
"""

from __future__ import annotations

from functools import lru_cache
from types import SimpleNamespace

from lift.errors import LiftTypeError
from lift.ir.operators import LIFT_MATH
from lift.ir.userfun import UserFun, userfun
from lift.ir.userfun_body import (Assign, Binary, Call, Component, Const, Convert, For, If, MakeTuple, MakeVector,
                                  Return, Select, SinCos, Unary, Variable, assigned)
from lift.types.types import Bool, Double, Float, Int, ScalarType, TupleType, Type, VectorType

_LANES = "xyzw"
_TYPE_NAMES = {Float: "Float", Double: "Double", Int: "Int", Bool: "Bool"}


class NotScalarisable(LiftTypeError):
    """A user function that has no scalar form here; the message says why."""


def lane_names(name: str, width: int) -> tuple:
    """The scalar parameters of vector parameter `name`: `p_x .. p_w`, or `p_s0 ..` for wider vectors."""
    return tuple(f"{name}_{_LANES[k]}" if width <= 4 else f"{name}_s{k}" for k in range(width))


def flat_scalars(t: Type) -> tuple:
    """The scalar types of a scalar, a vector's lanes, or a tuple of them, in order."""
    if isinstance(t, ScalarType):
        return (t,)
    if isinstance(t, VectorType):
        return (t.elem,) * t.width
    if isinstance(t, TupleType):
        return tuple(s for e in t.elems for s in flat_scalars(e))
    raise NotScalarisable(f"{t} is not scalars, vectors or tuples of them")


def has_vector(t: Type) -> bool:
    """Whether `t` is a vector or a tuple holding one."""
    return isinstance(t, VectorType) or isinstance(t, TupleType) and any(has_vector(e) for e in t.elems)


@lru_cache(maxsize=None)
def scalarised(u: UserFun) -> UserFun:
    """`u_soa`: `u` on the components of its vector parameters, giving the flat tuple of its result's scalars
    (see the module)."""
    spec = u.origin
    if spec is None:
        raise NotScalarisable(f"user function {u.name} is written in C, not in Python: its body is not known")
    for name, t in zip(u.param_names, u.in_types):
        if not isinstance(t, (ScalarType, VectorType)) or isinstance(t, VectorType) and t.elem == Bool:
            raise NotScalarisable(f"user function {u.name}: parameter {name} is {t}, not a scalar or a vector")
    if not any(isinstance(t, VectorType) for t in u.in_types) and not has_vector(u.out_type):
        raise NotScalarisable(f"user function {u.name} has no vectors")
    writer = _Writer(set(u.param_names) | set(assigned(spec.body)))
    params = []
    for name, t in zip(u.param_names, u.in_types):
        if isinstance(t, VectorType):
            params += [f"{n}: {_TYPE_NAMES[t.elem]}" for n in writer.bind(name, t.width)]
        else:
            params.append(f"{name}: {_TYPE_NAMES[t]}")
    result = flat_scalars(u.out_type)
    out = _TYPE_NAMES[result[0]] if isinstance(u.out_type, ScalarType) else \
        f"TupleType({', '.join(_TYPE_NAMES[t] for t in result)})"
    lines = [f"def {u.name}_soa({', '.join(params)}) -> {out}:"] + writer.block(spec.body, 1)
    try:
        return _defined(lines)
    except LiftTypeError as e:  # a constant Python cannot write back (an infinity), a name it shadows
        raise NotScalarisable(f"user function {u.name} on scalars: {e}") from None


@lru_cache(maxsize=None)
def lane(v: VectorType, k: int) -> UserFun:
    """The user function giving lane `k` of a vector of type `v`."""
    name = f"{_named(v)}_{lane_names('lane', v.width)[k]}"
    return _defined([f"def {name}(v: {_annotation(v)}) -> {_TYPE_NAMES[v.elem]}:", f"    return v[{k}]"])


@lru_cache(maxsize=None)
def packed(t: Type) -> UserFun:
    """The user function building a value of type `t` (a vector, or a tuple of vectors and scalars) from the
    flat tuple of its scalars (`flat_scalars`)."""
    scalars = flat_scalars(t)
    parts, at = [], 0
    for e in (t.elems if isinstance(t, TupleType) else (t,)):
        n = len(flat_scalars(e))
        lanes = ", ".join(f"s[{i}]" for i in range(at, at + n))
        parts.append(f"{_named(e).capitalize()}({lanes})" if isinstance(e, VectorType) else lanes)
        at += n
    result = parts[0] if not isinstance(t, TupleType) else f"({', '.join(parts)},)"
    name = "pack_" + "_".join(_named(e) for e in (t.elems if isinstance(t, TupleType) else (t,)))
    vectors = {_named(e).capitalize(): e for e in (t.elems if isinstance(t, TupleType) else (t,))
               if isinstance(e, VectorType)}
    return _defined([f"def {name}(s: TupleType({', '.join(_TYPE_NAMES[x] for x in scalars)})) -> {_annotation(t)}:",
                     f"    return {result}"], vectors)


def _named(t: Type) -> str:
    return f"{t.elem.name}{t.width}" if isinstance(t, VectorType) else t.name


def _annotation(t: Type) -> str:
    if isinstance(t, VectorType):
        return f"VectorType({_TYPE_NAMES[t.elem]}, {t.width})"
    if isinstance(t, TupleType):
        return f"TupleType({', '.join(_annotation(e) for e in t.elems)})"
    return _TYPE_NAMES[t]


def _defined(lines: list, vectors: dict = {}) -> UserFun:
    names = {"lift_math": SimpleNamespace(**LIFT_MATH), "TupleType": TupleType, "VectorType": VectorType, **vectors,
             **{v: k for k, v in _TYPE_NAMES.items()}}
    return userfun(source="\n".join(lines) + "\n", names=names)


class _Writer:
    """Prints a typed body as Python on scalars: every vector expression as its lanes."""

    def __init__(self, taken: set):
        self.vectors: dict = {}  # a vector variable's name: its lanes' names
        self.taken = taken  # the names of the function's parameters and locals

    def bind(self, name: str, width: int) -> tuple:
        """The names of the lanes of vector variable `name`, none of them a name of the function."""
        lanes = self.vectors.get(name) or lane_names(name, width)
        if any(n in self.taken for n in lanes):
            raise NotScalarisable(f"the lanes of {name} would be named as a variable of the function is")
        self.vectors[name] = lanes
        return lanes

    def block(self, stmts: tuple, depth: int) -> list:
        pad = "    " * depth
        out = []
        for s in stmts:
            if isinstance(s, Assign):
                values = self.lanes(s.value)
                if isinstance(s.value.type, VectorType):
                    out += [f"{pad}{n} = {v}" for n, v in zip(self.bind(s.name, s.value.type.width), values)]
                else:
                    out.append(f"{pad}{s.name} = {values[0]}")
            elif isinstance(s, SinCos):
                angle, width = self.lanes(s.angle), s.angle.type.width if isinstance(s.angle.type, VectorType) else 1
                for name, f in ((s.sin, "sin"), (s.cos, "cos")):
                    lanes = self.bind(name, width) if width > 1 else (name,)
                    out += [f"{pad}{n} = lift_math.{f}({a})" for n, a in zip(lanes, angle)]
            elif isinstance(s, Return):
                values = self.lanes(s.value)
                out.append(f"{pad}return {values[0]}" if len(values) == 1 and not isinstance(s.value.type, (
                    VectorType, TupleType)) else f"{pad}return ({', '.join(values)},)")
            elif isinstance(s, If):
                out.append(f"{pad}if {self.scalar(s.cond)}:")
                out += self.block(s.then, depth + 1) or [f"{pad}    pass"]
                if s.other:
                    out += [f"{pad}else:"] + self.block(s.other, depth + 1)
            elif isinstance(s, For):
                out.append(f"{pad}for {s.var} in range({self.scalar(s.start)}, {self.scalar(s.stop)}, {s.step}):")
                out += self.block(s.body, depth + 1) or [f"{pad}    pass"]
        return out

    def scalar(self, e) -> str:
        values = self.lanes(e)
        if len(values) != 1:
            raise NotScalarisable(f"a condition or bound on a vector ({e.type}) is a lane mask, not one branch")
        return values[0]

    def lanes(self, e) -> list:
        """The Python expressions of `e`'s lanes (one for a scalar), flattened through tuples."""
        width = e.type.width if isinstance(e.type, VectorType) else 1
        if isinstance(e, Const):
            return [repr(e.value)]
        if isinstance(e, Variable):
            return list(self.vectors[e.name]) if e.name in self.vectors else [e.name]
        if isinstance(e, Unary):
            op = "not " if e.op == "!" else e.op
            return [f"({op}{a})" for a in self._spread(self.lanes(e.operand), width)]
        if isinstance(e, Binary):
            left, right = self._spread(self.lanes(e.left), width), self._spread(self.lanes(e.right), width)
            return [f"({a} {e.op} {b})" for a, b in zip(left, right)]
        if isinstance(e, Select):
            cond, then, other = (self._spread(self.lanes(x), width) for x in (e.cond, e.then, e.other))
            return [f"({t} if {c} else {o})" for c, t, o in zip(cond, then, other)]
        if isinstance(e, Call):
            name = e.name if e.name in ("abs", "min", "max") else f"lift_math.{e.name}"
            args = [self._spread(self.lanes(a), width) for a in e.args]
            return [f"{name}({', '.join(lane)})" for lane in zip(*args)]
        if isinstance(e, Convert):
            scalar = e.type.elem if isinstance(e.type, VectorType) else e.type
            return [f"{_TYPE_NAMES[scalar]}({a})" for a in self._spread(self.lanes(e.operand), width)]
        if isinstance(e, (MakeVector, MakeTuple)):
            return [lane for x in e.elems for lane in self.lanes(x)]
        if isinstance(e, Component):
            return [self.lanes(e.operand)[e.index]]
        raise NotScalarisable(f"cannot write {type(e).__name__} of {e.type} on scalars")

    @staticmethod
    def _spread(values: list, width: int) -> list:
        """A scalar operand of a lane-wise operation is the same in every lane."""
        return values * width if len(values) == 1 else values

