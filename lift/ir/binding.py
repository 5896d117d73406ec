"""Binding a program's size variables from its inputs, and shaping inputs and outputs as numpy arrays.

A value of lift type `T` is held on the host as numpy data of `host_shape(T)`: an array dimension per
array type, outermost first, then a trailing axis for a vector's lanes; an array of tuples is a numpy
structured array with fields `_0, _1, ...` (the memory layout of the OpenCL structs), and a scalar
parameter is a numpy scalar. Inputs bind size variables: `float[N]` given 1000 floats binds `N = 1000`.
A compiled program's result has numpy's shape (`result_shape`): a reduction's one-element array is a scalar.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from lift.errors import LiftSizeError, LiftTypeError
from lift.types.arith import Cst, NotDivisible, UnboundSize, Var
from lift.types.types import ArrayType, ScalarType, TupleType, Type, VectorType, tuple_field


def host_dtype(t: Type) -> np.dtype:
    """The numpy dtype of one element of type `t` (scalar, vector lane, or struct for tuples)."""
    if isinstance(t, ArrayType):
        return host_dtype(t.elem)
    if isinstance(t, ScalarType):
        return t.dtype
    if isinstance(t, VectorType):
        return t.elem.dtype
    if isinstance(t, TupleType):
        fields = []
        for i, e in enumerate(t.elems):
            if isinstance(e, VectorType):
                fields.append((tuple_field(i), e.dtype, (e.width,)))
            elif isinstance(e, (ScalarType, TupleType)):
                fields.append((tuple_field(i), host_dtype(e)))
            else:
                raise LiftTypeError(f"tuples of arrays have no host layout: {t}")
        return np.dtype(fields, align=True)
    raise LiftTypeError(f"no host layout for {t}")


def host_shape(t: Type, sizes: Mapping[str, int]) -> tuple:
    """The numpy shape of a value of type `t` under a size binding."""
    shape = []
    while isinstance(t, ArrayType):
        shape.append(_length(t, sizes))
        t = t.elem
    if isinstance(t, VectorType):
        shape.append(t.width)
    return tuple(shape)


def _length(t: ArrayType, sizes: Mapping[str, int]) -> int:
    try:
        return t.length.eval(sizes)
    except (UnboundSize, NotDivisible) as e:
        raise LiftSizeError(str(e)) from None


def result_shape(t: Type, sizes: Mapping[str, int]) -> tuple:
    """The numpy shape of a result of type `t`: `host_shape` without the axes of constant length 1, which
    reductions leave (`Reduce` gives `[T]_1`), so that a full reduction is 0-d and a map of reductions over
    `R` rows has shape `(R,)`, as numpy's `sum` and `sum(axis=1)` give."""
    shape = []
    while isinstance(t, ArrayType):
        if t.length != Cst(1):
            shape.append(_length(t, sizes))
        t = t.elem
    return tuple(shape) + host_shape(t, sizes)


def bind_sizes(param_types: Sequence[Type], values: Sequence, names: Sequence[str],
               sizes: Mapping[str, int] | None = None) -> dict:
    """Size variables bound from input shapes (and `sizes`); conflicting or impossible shapes are errors.

    A length that is a variable binds it; one affine in a single variable not bound otherwise (`2*N` of
    interleaved complex numbers, `N+2`, `N/4`) binds it to the value that gives the input's length, and a
    length no value gives is an error naming the input."""
    bound = dict(sizes or {})
    if len(values) != len(param_types):
        raise LiftTypeError(f"the program takes {len(param_types)} input(s) ({', '.join(names)}), got {len(values)}")
    inputs = [(name, t, np.shape(v), _dimensions(name, t, np.shape(v)))
              for name, t, v in zip(names, param_types, values)]
    for _, _, shape, dims in inputs:
        for length, n in zip(dims, shape):
            if isinstance(length, Var) and length.name not in bound:
                bound[length.name] = int(n)
    for name, t, shape, dims in inputs:
        for length, n in zip(dims, shape):
            unbound = [v for v in length.free_vars() if v.name not in bound]
            if len(unbound) == 1:
                solved = _solve(length, unbound[0].name, int(n), bound)
                if solved is None:
                    raise LiftSizeError(f"input {name} should be {t}: no {unbound[0].name} gives {length} = {n} "
                                        f"(shape {shape})")
                bound[unbound[0].name] = solved
    for name, t, shape, dims in inputs:
        for length, n in zip(dims, shape):
            try:
                expected = length.eval(bound)
            except UnboundSize:
                continue
            except NotDivisible as e:
                raise LiftSizeError(f"input {name}: {e}") from None
            if expected != n:
                raise LiftSizeError(f"input {name} should be {t} with {length} = {expected}, got shape {shape}")
    return bound


def _dimensions(name: str, t: Type, shape: tuple) -> list:
    """The lengths of `t`'s array dimensions, outermost first, checked against the number of axes of `shape`."""
    dims = []
    inner = t
    while isinstance(inner, ArrayType):
        dims.append(inner.length)
        inner = inner.elem
    want = len(dims) + (1 if isinstance(inner, VectorType) else 0)
    if len(shape) != want:
        raise LiftTypeError(f"input {name} should be {t} ({want}-D), got an array of shape {shape}")
    if isinstance(inner, VectorType) and shape[-1] != inner.width:
        raise LiftTypeError(f"input {name} should be {t}: its last axis must have {inner.width} lanes, got {shape}")
    return dims


_PROBE = 720720  # divisible by 1..16, so that the exact divisions of a length (N/4) are integral there


def _solve(length, var: str, n: int, bound: Mapping[str, int]) -> int | None:
    """The value of `var` for which `length` (affine in it under `bound`) is `n`, or None if there is none."""
    def at(v):
        try:
            return length.eval({**bound, var: v})
        except NotDivisible:
            return None
    low, high = at(0), at(_PROBE)
    if low is None or high is None or high == low or ((n - low) * _PROBE) % (high - low):
        return None
    v = (n - low) * _PROBE // (high - low)
    return v if v > 0 and at(v) == n else None


def to_host(value, t: Type, name: str) -> np.ndarray:
    """An input as numpy data of `t`'s element dtype; lossy kind changes (float to int) are errors."""
    want = host_dtype(t)
    arr = np.asarray(value)
    if arr.dtype == want:
        return arr
    if want.fields is not None or arr.dtype.fields is not None:
        raise LiftTypeError(f"input {name} should have dtype {want}, got {arr.dtype}")
    if not np.can_cast(arr.dtype, want, casting="same_kind"):
        raise LiftTypeError(f"input {name} should hold {t} (dtype {want}), got dtype {arr.dtype}")
    return arr.astype(want)
