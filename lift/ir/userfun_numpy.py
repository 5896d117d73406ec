"""The numpy evaluator of user functions written in Python: their typed body (`lift.ir.userfun_body`) run
once on whole arrays, for the reference interpreter.

Vector values carry a trailing lane axis and tuples are Python tuples. Both branches of every condition
run, and `np.where` merges them; integer `/` and `%` truncate toward zero as in C. A `for` loop whose bounds
are the same for every element runs once in Python over whole arrays; where the bounds differ between
elements, it runs as often as the longest element needs, each element's locals changing only while its own
loop runs (a mask merged with `np.where`, as for conditions).
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

from lift.errors import LiftEvalError
from lift.ir.userfun_body import (Assign, Binary, Call, Component, Const, Convert, Field, For, If, Index, Length,
                                  MakeTuple, MakeVector, Return, Select, SinCos, Unary, Variable, lanes_scalar)
from lift.types.types import ArrayType, Int, ScalarType, TupleType, Type, VectorType


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


NP_MATH = {
    "sqrt": np.sqrt, "exp": np.exp, "expm1": np.expm1, "log": np.log, "log2": np.log2, "log10": np.log10,
    "log1p": np.log1p, "sin": np.sin, "cos": np.cos, "tan": np.tan, "asin": np.arcsin, "acos": np.arccos,
    "atan": np.arctan, "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh, "asinh": np.arcsinh,
    "acosh": np.arccosh, "atanh": np.arctanh, "floor": np.floor, "ceil": np.ceil, "trunc": np.trunc,
    "fabs": np.fabs, "erf": _np_erf, "pow": np.power, "atan2": np.arctan2, "fmod": np.fmod, "hypot": np.hypot,
    "copysign": np.copysign, "fmin": np.fmin, "fmax": np.fmax,
}
_NP_BINARY = {"+": np.add, "-": np.subtract, "*": np.multiply, "/": np.true_divide, "%": np.fmod,
              "<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal, "==": np.equal,
              "!=": np.not_equal, "and": np.logical_and, "or": np.logical_or}
_NP_BITWISE = {"&": np.bitwise_and, "|": np.bitwise_or, "^": np.bitwise_xor, "<<": np.left_shift,
               ">>": np.right_shift}


def bitwise_numpy(op: str, a, b):
    """OpenCL C's `a op b` on 32-bit ints: a shift counts modulo 32 (OpenCL C 6.3.j), `<<` wraps."""
    if op in ("<<", ">>"):
        b = np.bitwise_and(b, 31)
    return _NP_BITWISE[op](a, b)


_NP_BUILTINS = {"abs": np.abs, "min": np.fmin, "max": np.fmax}


class BatchedArray:
    """An array argument that differs between the elements of a batch (a row of a matrix inside the map over
    its rows): its first `d` axes are the batch axes, the array's own axes follow. `a[i]` reads, for each
    element of the batch, its own array at its own index."""

    def __init__(self, value, d: int):
        self.value, self.d = value, d

    @property
    def batch(self) -> tuple:
        return np.shape(self.value)[:self.d]

    def at(self, indices: tuple):
        grids = np.indices(self.batch, sparse=True)
        return self.value[tuple(grids) + tuple(np.asarray(i) for i in indices)]


def numpy_function(fun, body: tuple) -> Callable:
    """A Python function that runs `body` once on whole arrays. An array argument is passed whole, or as a
    `BatchedArray` of one array per element of the batch."""

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
    impl.takes_batched_arrays = True
    return impl


def _np_input(name: str, value, t: Type):
    if isinstance(value, BatchedArray):
        return _leaves_batched(_np_input(name, value.value, t), value.d)
    if isinstance(t, ArrayType):
        return _np_input(name, value, t.elem)
    if isinstance(t, TupleType):
        return tuple(_np_input(name, v, e) for v, e in zip(value, t.elems))
    value = np.asarray(value, t.dtype)
    if isinstance(t, VectorType) and (value.ndim == 0 or value.shape[-1] != t.width):
        raise LiftEvalError(f"user function {name}: a {t} argument needs a last axis of {t.width} lanes, "
                            f"got shape {value.shape}")
    return value


def _leaves_batched(value, d: int):
    """`BatchedArray`s of the component arrays of an array of tuples (a tuple of arrays), or of the array."""
    if isinstance(value, tuple):
        return tuple(_leaves_batched(v, d) for v in value)
    return BatchedArray(value, d)


def _first(value):
    return _first(value[0]) if isinstance(value, tuple) else value


def _batch_shape(value, t: Type) -> tuple:
    """The shape of the elements an argument holds: arrays are passed whole (or one per element of the batch:
    `BatchedArray`), vectors have a lane axis."""
    if isinstance(t, ArrayType):
        first = _first(value)
        return first.batch if isinstance(first, BatchedArray) else ()
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
            case Assign(name, value):
                env[name] = _np_eval(value, env)
            case SinCos(angle, sin, cos):
                a = _np_eval(angle, env)
                env[sin], env[cos] = NP_MATH["sin"](a), NP_MATH["cos"](a)
            case Return(value):
                return _np_eval(value, env)
            case If(cond, then, other, merged, returns):
                mask = _np_eval(cond, env)
                then_env, other_env = dict(env), dict(env)
                then_result, other_result = _np_block(then, then_env, out_type), _np_block(other, other_env, out_type)
                if returns:
                    return _np_where(mask, cond.type, then_result, other_result, out_type)
                for name, t in merged:
                    env[name] = _np_where(mask, cond.type, then_env[name], other_env[name], t)
            case For():
                _np_loop(stmt, env, out_type)
    return None


def _np_loop(loop: For, env: dict, out_type: Type):
    start, stop = np.asarray(_np_eval(loop.start, env)), np.asarray(_np_eval(loop.stop, env))
    if start.ndim == 0 and stop.ndim == 0:
        for i in range(int(start), int(stop), loop.step):
            env[loop.var] = np.int32(i)
            _np_block(loop.body, env, out_type)
        return
    step = loop.step
    trips = np.maximum(0, (stop.astype(np.int64) - start + (step - 1 if step > 0 else step + 1)) // step)
    for k in range(int(trips.max(initial=0))):
        active = k < trips
        body_env = dict(env)
        body_env[loop.var] = (start + k * step).astype(np.int32)
        _np_block(loop.body, body_env, out_type)
        for name, t in loop.merged:
            env[name] = _np_where(active, Int, body_env[name], env[name], t)


def _np_where(mask, mask_type: Type, then, other, t: Type):
    if isinstance(t, TupleType):
        return tuple(_np_where(mask, mask_type, a, b, e) for a, b, e in zip(then, other, t.elems))
    if isinstance(t, VectorType) and isinstance(mask_type, ScalarType):
        mask = np.asarray(mask)[..., np.newaxis]
    return np.where(mask, then, other)


def _np_eval(e, env: dict):
    match e:
        case Const(value, t):
            return t.dtype.type(value)
        case Variable(name, _):
            return env[name]
        case Unary("-", x, _):
            return np.negative(_np_eval(x, env))
        case Unary("!", x, _):
            return np.logical_not(_np_eval(x, env))
        case Unary("~", x, _):
            return np.invert(_np_eval(x, env))
        case Binary(op, left, right, _) if op in _NP_BITWISE:
            return bitwise_numpy(op, _np_eval(left, env), _np_eval(right, env))
        case Binary("/", left, right, t) if lanes_scalar(t) == Int:
            a, b = _np_eval(left, env), _np_eval(right, env)
            return (a - np.fmod(a, b)) // b  # C's division, truncating toward zero
        case Binary(op, left, right, _):
            return _NP_BINARY[op](_np_eval(left, env), _np_eval(right, env))
        case Select(cond, then, other, t):
            return _np_where(_np_eval(cond, env), cond.type, _np_eval(then, env), _np_eval(other, env), t)
        case Call(name, args, _):
            function = _NP_BUILTINS.get(name) or NP_MATH[name]
            return function(*(_np_eval(a, env) for a in args))
        case Convert(x, t):
            value = np.asarray(_np_eval(x, env)).astype(t.dtype)
            if isinstance(x.type, ScalarType) and isinstance(t, VectorType):
                return np.broadcast_to(value[..., np.newaxis], value.shape + (t.width,))
            return value
        case MakeVector(elems, _):
            lanes = [_np_eval(x, env) for x in elems]
            out = np.empty(np.broadcast_shapes(*(np.shape(v) for v in lanes)) + (len(lanes),), np.result_type(*lanes))
            for i, lane in enumerate(lanes):
                out[..., i] = lane
            return out
        case Component(x, i, _):
            return _np_eval(x, env)[..., i]
        case Field(x, i, _):
            return _np_eval(x, env)[i]
        case Index(array, index, t):
            indices = [index]
            while isinstance(array, Index):  # a[i][j] is one element of a multi-dimensional array: a[i, j]
                array, indices = array.array, [array.index] + indices
            values, i = _np_eval(array, env), tuple(_np_eval(x, env) for x in indices)
            return tuple(_at(v, i) for v in values) if isinstance(t, TupleType) else _at(values, i)
        case MakeTuple(elems, _):
            return tuple(_np_eval(x, env) for x in elems)
        case Length(array, _):
            value = _first(env[array])  # an array of tuples is a tuple of arrays
            if isinstance(value, BatchedArray):
                return np.int32(np.shape(value.value)[value.d])
            return np.int32(np.shape(value)[0])
    raise AssertionError(f"no numpy meaning for {e}")


def _at(values, indices: tuple):
    return values.at(indices) if isinstance(values, BatchedArray) else values[indices]
