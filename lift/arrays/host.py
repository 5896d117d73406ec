"""The host path: a graph of lift arrays evaluated with numpy, node by node (Brook's CPU side).

Each operator has numpy's meaning, as the device program has (`lift.arrays.operators`): the host path is
what `lift.config(placement="host")` runs and what the cost model weighs the device against.
"""

from __future__ import annotations

import numpy as np

from lift.arrays.array import LiftArray
from lift.arrays.operators import NP_PAD, NUMPY

_REDUCE = {"add": np.add, "max": np.maximum, "min": np.minimum}


def evaluate_on_host(targets) -> list:
    """The values of `targets` as numpy arrays, each node computed once."""
    values: dict = {}
    return [_value(t, values) for t in targets]


def _value(n, values: dict):
    """`n`'s value, its operands' kept in `values` (a module function: a recursive closure would be a
    reference cycle holding every intermediate array until the garbage collector runs)."""
    if not isinstance(n, LiftArray):
        return n
    if n not in values and is_contraction(n):
        values[n] = _contraction(n, [_value(a, values) for a in n.args[0].args])
    elif n not in values:
        values[n] = np.asarray(_compute(n, [_value(a, values) for a in n.args]))
    return values[n]


def is_contraction(n: LiftArray) -> bool:
    """Whether `n` sums products over its last axis (`a @ b`): numpy computes it with BLAS, not the products."""
    if n.op != "reduce" or n.attrs[0] != "add":
        return False
    body = n.args[0]
    return body.op == "map" and body.attrs[0] == "multiply" and body.ndim > 1 and \
        all(isinstance(a, LiftArray) and a.dtype == body.dtype for a in body.args)


def _contraction(n: LiftArray, operands: list) -> np.ndarray:
    shape = n.args[0].shape
    letters = "abcdefghijklmnop"[:len(shape)]
    subscripts = []
    for x in operands:
        offset = len(shape) - x.ndim
        subscripts.append("".join(letters[offset + j] for j, size in enumerate(x.shape) if size != 1))
    out = "".join(c for c, size in zip(letters[:-1], shape[:-1]) if size != 1)
    squeezed = [x.reshape(tuple(s for s in x.shape if s != 1)) for x in operands]
    result = np.einsum(f"{','.join(subscripts)}->{out}", *squeezed, optimize=True)
    return np.asarray(result, n.dtype).reshape(n.shape)


def _padded(x: np.ndarray, widths, boundary) -> np.ndarray:
    if isinstance(boundary, str):
        return np.pad(x, widths, mode=NP_PAD[boundary])
    return np.pad(x, widths, mode="constant", constant_values=boundary)


def _compute(n: LiftArray, args: list) -> np.ndarray:
    if n.op == "input":
        return n.host_value()
    if n.op == "map":
        op = n.attrs[0]
        if op == "astype":
            return args[0].astype(n.dtype)
        with np.errstate(all="ignore"):
            return np.asarray(NUMPY[op](*args)).astype(n.dtype, copy=False)
    if n.op == "reduce":
        return _REDUCE[n.attrs[0]].reduce(args[0], axis=-1).astype(n.dtype, copy=False)
    if n.op == "transpose":
        return np.transpose(args[0], n.attrs[0])
    if n.op == "reshape":
        return args[0].reshape(n.shape)
    if n.op == "section":
        return args[0][tuple(slice(start, stop) for start, stop in n.attrs[0])]
    if n.op == "pad":
        before, after, boundary = n.attrs
        return _padded(args[0], list(zip(before, after)), boundary)
    if n.op == "shift":
        offsets, boundary = n.attrs
        widths = [(max(s, 0), max(-s, 0)) for s in offsets]
        p = _padded(args[0], widths, boundary)
        return p[tuple(slice(max(-s, 0), max(-s, 0) + size) for s, size in zip(offsets, n.shape))]
    if n.op == "gather":
        x = args[0]
        return x[tuple(np.clip(i, 0, size - 1) for i, size in zip(args[1:], x.shape))]
    raise ValueError(f"no host evaluation of {n.op}")
