"""Values of the reference interpreter (`lift.ir.interpreter`): numpy arrays, and Python tuples of them for
tuples (structure of arrays), whose first axes are the batch axes of the enclosing maps.

Conversions from and to the host's layout (`lift.ir.binding`: structured arrays for tuples), and the array
operations applied to every array of a value.
"""

from __future__ import annotations

from typing import Mapping

import numpy as np

from lift.ir.binding import host_dtype, result_shape
from lift.types.types import ArrayType, TupleType, Type, VectorType, element_type


def numpy_shaped(v, t: Type, sizes: Mapping[str, int]):
    """A host result in numpy's shape (`lift.ir.binding.result_shape`), each output of several apart."""
    if isinstance(t, TupleType) and any(isinstance(e, ArrayType) for e in t.elems):
        return tuple(numpy_shaped(c, e, sizes) for c, e in zip(v, t.elems))
    return v.reshape(result_shape(t, sizes))


def from_host(a, t: Type):
    """Host data to the interpreter's layout: structured arrays become tuples of component arrays."""
    if isinstance(t, ArrayType):
        return from_host(a, element_type(t))
    if isinstance(t, TupleType):
        return tuple(from_host(a[f"_{i}"], e) for i, e in enumerate(t.elems))
    return a


def as_host(v, t: Type):
    """The interpreter's value of type `t` in the host's layout: tuples of component arrays become structured arrays
    (several outputs a Python tuple of them)."""
    if isinstance(t, TupleType) and any(isinstance(e, ArrayType) for e in t.elems):
        return tuple(as_host(c, e) for c, e in zip(v, t.elems))
    elem = element_type(t)
    if isinstance(elem, TupleType):
        parts = [as_host(c, e) for c, e in zip(v, elem.elems)]
        shape = np.shape(parts[0])[: np.ndim(parts[0]) - (1 if isinstance(elem.elems[0], VectorType) else 0)]
        out = np.empty(shape, dtype=host_dtype(elem))
        for i, part in enumerate(parts):
            out[f"_{i}"] = part
        return out
    return np.ascontiguousarray(v, dtype=host_dtype(t)) if isinstance(t, ArrayType) else np.asarray(v, host_dtype(t))


def leaves(f, v):
    """Apply `f` to every array of a (possibly tuple) value."""
    if isinstance(v, tuple):
        return tuple(leaves(f, c) for c in v)
    return f(np.asarray(v))


def first_leaf(v):
    """The first array of a (possibly tuple) value."""
    return first_leaf(v[0]) if isinstance(v, tuple) else np.asarray(v)


def stack(values: list, axis: int):
    """The values stacked along a new axis `axis`, component by component."""
    if isinstance(values[0], tuple):
        return tuple(stack([v[k] for v in values], axis) for k in range(len(values[0])))
    return np.stack([np.asarray(v) for v in values], axis=axis)


def concat(values: list, axis: int):
    """The values concatenated along `axis`, component by component."""
    if len(values) == 1:
        return values[0]
    if isinstance(values[0], tuple):
        return tuple(concat([v[k] for v in values], axis) for k in range(len(values[0])))
    return np.concatenate([np.asarray(v) for v in values], axis=axis)


def slice_value(value, axis: int, start: int, stop: int):
    """Elements `start` to `stop` of every array of a value along `axis` (views, not copies)."""
    index = (slice(None),) * axis + (slice(start, stop),)
    return leaves(lambda a: a[index], value)
