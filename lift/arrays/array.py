"""`LiftArray`: a lazy data-parallel array, a node of an expression graph (Accelerator, Tarditi et al.).

Each operation on arrays allocates one node holding its operator, its attributes and its operands (other
arrays or Python numbers); nothing runs until a value is asked for (`get`, `np.asarray`, `lift.evaluate`),
when the graph becomes one lift program (`lift.arrays.graph`) run where `lift.arrays.placement` says. A
leaf (`op == "input"`) holds a private copy of the caller's numpy data (so that later changes to the numpy
array do not change the lift array), or the caller's `pyopencl.array.Array` itself; an evaluated node
becomes a leaf holding its value. A leaf's value lives on the host (`value`), on the device (`on_device`,
uploaded once when a program first reads it, where results of device programs stay) or both; `get()`
downloads what is only on the device.
"""

from __future__ import annotations

import itertools
from typing import Optional

import numpy as np

from lift.errors import LiftTypeError
from lift.types.types import Bool, Double, Float, Int, ScalarType

LIFT_TYPES = {np.dtype(np.float32): Float, np.dtype(np.float64): Double, np.dtype(np.int32): Int,
              np.dtype(np.bool_): Bool}
_serial = itertools.count()


def lift_type(dtype) -> ScalarType:
    """The lift scalar type of a numpy dtype (float32, float64, int32, bool); one error naming others."""
    try:
        return LIFT_TYPES[np.dtype(dtype)]
    except KeyError:
        raise LiftTypeError(f"lift arrays hold float32, float64, int32 or bool elements, not {np.dtype(dtype)}: "
                            f"convert with astype first") from None


class LiftArray:
    """A node of the expression graph: `op` applied to `args` with `attrs`, of numpy `shape` and `dtype`.

    `serial` orders nodes by creation, which is a topological order (operands exist before their users).
    Operators and methods are numpy's (`lift.arrays.operators`); `get()` or `np.asarray(x)` evaluates.
    """

    __array_priority__ = 100

    def __init__(self, op: str, args: tuple, attrs: tuple, shape: tuple, dtype, device=None,
                 value: Optional[np.ndarray] = None, on_device=None):
        self.op, self.args, self.attrs = op, args, attrs
        self.shape, self.dtype = tuple(int(n) for n in shape), np.dtype(dtype)
        lift_type(self.dtype)
        self.device = device if device is not None else next((a.device for a in args if isinstance(a, LiftArray)
                                                              and a.device is not None), None)
        self.value, self.on_device = value, on_device
        self.serial = next(_serial)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    @property
    def evaluated(self) -> bool:
        return self.value is not None or self.on_device is not None

    def set_value(self, value) -> None:
        """Make this node a leaf holding its computed value, numpy or on the device (the graph below it may
        be freed)."""
        self.op, self.args, self.attrs = "input", (), ()
        if isinstance(value, np.ndarray):
            self.value = np.asarray(value, self.dtype).reshape(self.shape)
        else:
            self.on_device = value

    def host_value(self) -> np.ndarray:
        """An evaluated leaf's value on the host, downloaded (once) where it is only on the device."""
        if self.value is None:
            self.value = self.on_device.get().reshape(self.shape)
        return self.value

    def get(self) -> np.ndarray:
        """The value as a numpy array, evaluating the graph if needed (Accelerator's ToArray)."""
        from lift.arrays.evaluation import evaluate

        evaluate(self)
        return self.host_value().copy()

    def __array__(self, dtype=None, copy=None):
        value = self.get()
        return value if dtype is None else value.astype(dtype)

    def __repr__(self) -> str:
        state = "evaluated" if self.evaluated else f"lazy {self.op}"
        return f"LiftArray(shape={self.shape}, dtype={self.dtype}, {state})"

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d lift array")
        return self.shape[0]

    def __bool__(self):
        raise TypeError("the truth value of a lift array is ambiguous: evaluate it (x.get()) or use lift.where")

    def __float__(self) -> float:
        return float(self.get())

    def __int__(self) -> int:
        return int(self.get())

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        from lift.arrays.operators import UFUNCS

        if method != "__call__" or kwargs or ufunc.__name__ not in UFUNCS:
            return NotImplemented
        return UFUNCS[ufunc.__name__](*inputs)


def _install_operators() -> None:
    """numpy's operators and methods on `LiftArray`, each building one node (`lift.arrays.operators`)."""
    from lift.arrays import operators as ops

    binary = {"add": "add", "sub": "subtract", "mul": "multiply", "truediv": "divide", "pow": "power",
              "and": "logical_and", "or": "logical_or", "lt": "less", "le": "less_equal", "gt": "greater",
              "ge": "greater_equal", "eq": "equal", "ne": "not_equal"}
    for name, op in binary.items():
        setattr(LiftArray, f"__{name}__", lambda self, other, op=op: ops.elementwise(op, self, other))
        if op not in ops.COMPARISONS:
            setattr(LiftArray, f"__r{name}__", lambda self, other, op=op: ops.elementwise(op, other, self))
    LiftArray.__invert__ = lambda self: ops.elementwise("logical_not", self)
    LiftArray.__neg__ = lambda self: ops.elementwise("negative", self)
    LiftArray.__pos__ = lambda self: self
    LiftArray.__abs__ = lambda self: ops.elementwise("absolute", self)
    LiftArray.__lift_math__ = staticmethod(lambda name, *args: ops.elementwise(ops.LIFT_MATH_NAMES.get(name, name),
                                                                              *args))
    LiftArray.__matmul__ = lambda self, other: ops.matmul(self, other)
    LiftArray.__rmatmul__ = lambda self, other: ops.matmul(other, self)
    LiftArray.__getitem__ = ops.getitem
    LiftArray.__hash__ = object.__hash__
    LiftArray.sum = lambda self, axis=None, keepdims=False: ops.reduce("add", self, axis, keepdims)
    LiftArray.max = lambda self, axis=None, keepdims=False: ops.reduce("max", self, axis, keepdims)
    LiftArray.min = lambda self, axis=None, keepdims=False: ops.reduce("min", self, axis, keepdims)
    LiftArray.mean = ops.mean
    LiftArray.astype = ops.astype
    LiftArray.transpose = lambda self, *axes: ops.transpose(self, axes[0] if len(axes) == 1 else axes or None)
    LiftArray.T = property(lambda self: ops.transpose(self))
    LiftArray.reshape = lambda self, *shape: ops.reshape(self, shape[0] if len(shape) == 1 else shape)
    LiftArray.ravel = lambda self: ops.reshape(self, (-1,))
    LiftArray.shift = ops.shift
    LiftArray.rotate = ops.rotate
    LiftArray.pad = ops.pad
    LiftArray.stencil = ops.stencil
    LiftArray.dot = ops.matmul


_install_operators()
