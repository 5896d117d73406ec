"""The operations on lift arrays, numpy's names and meanings, each building one graph node.

Element-wise operations (`op == "map"`) broadcast as numpy does and take numpy's result dtype (computed by
numpy on empty arrays, so that Python numbers are weak: `x * 2.0` of a float32 `x` is float32). Reductions
(`"reduce"`) reduce the last axis; another axis is first moved last by a transpose view. `a @ b` is a sum
of products, as the paper's dot, gemv and matrix multiply are. Accelerator's transformation operators are
`shift` (`r[i] = x[i - s]`, out-of-range reads given by the boundary: clamp, wrap, mirror or a constant),
`rotate` (a shift that wraps) and `pad`; `stencil(f, window)` applies `f` to the neighbourhood of every
element (its arguments are shifts, which the program reads from one window: `lift.arrays.graph`). Shifts
and stencils take arrays of 1 to 3 dimensions.
`x[i, j]` with integer index arrays gathers (indices clipped to the bounds, numpy's `mode="clip"`);
`x[a:b, c:d]` with steps of 1 is a view (`section`).
"""

from __future__ import annotations

import numpy as np

from lift.arrays.array import LiftArray, lift_type
from lift.errors import LiftTypeError
from lift.ir.userfun_numpy import NP_MATH

ARITHMETIC = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply, "divide": np.true_divide,
              "power": np.power, "maximum": np.maximum, "minimum": np.minimum}
COMPARISONS = {"less": np.less, "less_equal": np.less_equal, "greater": np.greater,
               "greater_equal": np.greater_equal, "equal": np.equal, "not_equal": np.not_equal}
LOGICAL = {"logical_and": np.logical_and, "logical_or": np.logical_or}
UNARY = {"negative": np.negative, "absolute": np.absolute, "logical_not": np.logical_not}
MATH = {name: f for name, f in NP_MATH.items() if name not in ("fmin", "fmax")}  # lift's (C's) names
NUMPY = {**ARITHMETIC, **COMPARISONS, **LOGICAL, **UNARY, **MATH, "where": np.where}
LIFT_MATH_NAMES = {"fmin": "minimum", "fmax": "maximum"}  # lift's math functions that are other operations here
BOUNDARIES = ("clamp", "wrap", "mirror")
NP_PAD = {"clamp": "edge", "wrap": "wrap", "mirror": "symmetric"}


def asarray(data, device=None) -> LiftArray:
    """A lift array holding a copy of `data` (a numpy array, a lift array, or anything `np.asarray` takes),
    or `data` itself where it is a `pyopencl.array.Array` (its queue then runs the programs that read it).

    int64 data (numpy's default integer) is stored as int32 where its values fit."""
    if isinstance(data, LiftArray):
        return data
    if type(data).__module__.startswith("pyopencl"):
        lift_type(data.dtype)
        if not data.flags.c_contiguous:
            raise LiftTypeError(f"asarray: a pyopencl array must be C-contiguous, got strides {data.strides}")
        return LiftArray("input", (), (), data.shape, data.dtype, data.queue, on_device=data)
    array = np.asarray(data)
    if array.dtype == np.int64 and array.size and (array.min() < -2**31 or array.max() >= 2**31):
        raise LiftTypeError("asarray: int64 values beyond int32's range (lift arrays hold int32)")
    array = array.astype(np.int32) if array.dtype == np.int64 else array
    lift_type(array.dtype)
    return LiftArray("input", (), (), array.shape, array.dtype, device, np.array(array, copy=True, order="C"))


def _shape_of(a) -> tuple:
    return a.shape if isinstance(a, LiftArray) else ()


def _probe(a):
    """A stand-in with `a`'s dtype for numpy's type rules: an empty array, or the Python number itself."""
    return np.empty(0, a.dtype) if isinstance(a, LiftArray) else a


def _operand(a):
    if isinstance(a, LiftArray):
        return a
    if isinstance(a, (bool, int, float, np.number, np.bool_)):
        return a.item() if isinstance(a, (np.number, np.bool_)) else a
    return asarray(a)


def elementwise(op: str, *operands) -> LiftArray:
    """numpy's element-wise `op` (a key of `NUMPY`) on arrays and numbers, broadcast."""
    operands = tuple(_operand(a) for a in operands)
    arrays = [a for a in operands if isinstance(a, LiftArray)]
    if not arrays:
        return NUMPY[op](*operands)
    try:
        shape = np.broadcast_shapes(*(_shape_of(a) for a in operands))
        dtype = NUMPY[op](*(_probe(a) for a in operands)).dtype
    except (ValueError, TypeError) as e:
        raise LiftTypeError(f"{op}: operands of shapes {[_shape_of(a) for a in operands]} and types "
                            f"{[getattr(a, 'dtype', type(a).__name__) for a in operands]}: {e}") from None
    return LiftArray("map", operands, (op,), shape, dtype)


def where(condition, x, y) -> LiftArray:
    """`x` where `condition`, else `y` (numpy's `where`)."""
    return elementwise("where", condition, x, y)


def maximum(x, y) -> LiftArray:
    return elementwise("maximum", x, y)


def minimum(x, y) -> LiftArray:
    return elementwise("minimum", x, y)


def astype(x: LiftArray, dtype) -> LiftArray:
    """`x` converted element by element to `dtype` (C's conversion: floats to int truncate)."""
    lift_type(dtype)
    return x if np.dtype(dtype) == x.dtype else LiftArray("map", (x,), ("astype",), x.shape, dtype)


def _axes(axis, ndim: int, name: str) -> list:
    axes = list(range(ndim)) if axis is None else list(axis) if isinstance(axis, (tuple, list)) else [axis]
    for a in axes:
        if not -ndim <= a < ndim:
            raise LiftTypeError(f"{name}: axis {a} is out of range for an array of {ndim} dimensions")
    return sorted({a % ndim for a in axes}, reverse=True)


def reduce(op: str, x: LiftArray, axis=None, keepdims: bool = False) -> LiftArray:
    """numpy's `sum`/`max`/`min` (`op` "add", "max", "min") over `axis` (an int, a tuple, or None: all); with
    `keepdims`, the reduced axes stay as axes of length 1 (a view), so that the result broadcasts against `x`."""
    x = asarray(x)
    axes = _axes(axis, x.ndim, f"{op} reduction")
    if keepdims:
        kept = tuple(1 if a in axes else n for a, n in enumerate(x.shape))
        return reshape(reduce(op, x, axis), kept)
    if len(axes) > 1 and axes == list(range(x.ndim))[::-1]:
        x, axes = reshape(x, (-1,)), [0]
    for a in axes:
        if x.shape[a] == 1 and not (op == "add" and x.dtype == np.bool_):
            x = reshape(x, x.shape[:a] + x.shape[a + 1:])
            continue
        if x.shape[a] == 0:
            raise LiftTypeError(f"{op} reduction over an empty axis {a} of an array of shape {x.shape}")
        if a != x.ndim - 1:
            x = transpose(x, [d for d in range(x.ndim) if d != a] + [a])
        dtype = np.int32 if x.dtype == np.bool_ and op == "add" else x.dtype
        x = LiftArray("reduce", (astype(x, dtype),), (op,), x.shape[:-1], dtype)
    return x


def mean(x: LiftArray, axis=None, keepdims: bool = False) -> LiftArray:
    """The arithmetic mean over `axis` (float64 for integers, as numpy); `keepdims` as `reduce`'s."""
    count = int(np.prod([x.shape[a] for a in _axes(axis, x.ndim, "mean")]))
    total = reduce("add", x if x.dtype.kind == "f" else astype(x, np.float64), axis, keepdims)
    return elementwise("divide", total, float(count))


def matmul(a, b) -> LiftArray:
    """numpy's `a @ b` for 1-D and 2-D operands: a sum of products over the shared axis."""
    a, b = asarray(a), asarray(b)
    if a.ndim not in (1, 2) or b.ndim not in (1, 2) or a.shape[-1] != b.shape[0]:
        raise LiftTypeError(f"matmul: operands of shapes {a.shape} and {b.shape} (1-D or 2-D, the last axis of "
                            f"the first as long as the first of the second)")
    if a.ndim == 2 and b.ndim == 2:
        bt = LiftArray("transpose", (b,), ((1, 0),), b.shape[::-1], b.dtype) if b.op == "map" else transpose(b)
        a, bt = _broadcast_view(a, (a.shape[0], 1, a.shape[1])), _broadcast_view(bt, (1,) + bt.shape)
    else:
        bt = transpose(b) if b.ndim == 2 else b                         # (n, k) or (k,)
    return reduce("add", elementwise("multiply", a, bt), -1)


def _broadcast_view(x: LiftArray, shape: tuple) -> LiftArray:
    """`x` reshaped to `shape`, which a matrix product broadcasts along its other operand's axis. An element-wise
    `x` is not distributed into its operands (`reshape`), so that the product reads it as one array, computed
    once (`lift.arrays.graph`), not once per row or column of the other operand."""
    return LiftArray("reshape", (x,), (shape,), shape, x.dtype) if x.op == "map" else reshape(x, shape)


def transpose(x: LiftArray, axes=None) -> LiftArray:
    """A view with the axes permuted (reversed by default), as numpy's `transpose`."""
    axes = tuple(range(x.ndim))[::-1] if axes is None else tuple(a % max(x.ndim, 1) for a in axes)
    if sorted(axes) != list(range(x.ndim)):
        raise LiftTypeError(f"transpose: {axes} is not a permutation of the axes of an array of shape {x.shape}")
    if axes == tuple(range(x.ndim)):
        return x
    if _distributes(x):
        return LiftArray("map", tuple(transpose(a, axes) if isinstance(a, LiftArray) else a for a in x.args),
                         x.attrs, tuple(x.shape[a] for a in axes), x.dtype)
    return LiftArray("transpose", (x,), (axes,), tuple(x.shape[a] for a in axes), x.dtype)


def reshape(x: LiftArray, shape) -> LiftArray:
    """A view of the same elements in row-major order with another shape (one -1 is inferred)."""
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(int(n) for n in shape)
    if shape.count(-1) == 1:
        known = int(np.prod([n for n in shape if n != -1]))
        shape = tuple(x.size // max(known, 1) if n == -1 else n for n in shape)
    if int(np.prod(shape, dtype=np.int64)) != x.size or any(n < 0 for n in shape):
        raise LiftTypeError(f"reshape: cannot view an array of shape {x.shape} as {shape}")
    if shape == x.shape:
        return x
    if _distributes(x):
        return LiftArray("map", tuple(reshape(a, shape) if isinstance(a, LiftArray) else a for a in x.args),
                         x.attrs, shape, x.dtype)
    return LiftArray("reshape", (x,), (shape,), shape, x.dtype)


def _distributes(x: LiftArray) -> bool:
    """Whether a view of `x` is the element-wise operation `x` of the same view of its operands (Accelerator
    pushes transformations to the leaves so that they stay in one kernel)."""
    return x.op == "map" and all(a.shape == x.shape for a in x.args if isinstance(a, LiftArray))


def _boundary(boundary, name: str):
    if isinstance(boundary, str):
        if boundary not in BOUNDARIES:
            raise LiftTypeError(f"{name}: boundary must be one of {BOUNDARIES} or a number, got {boundary!r}")
        return boundary
    if not isinstance(boundary, (int, float, np.number)):
        raise LiftTypeError(f"{name}: boundary must be one of {BOUNDARIES} or a number, got {boundary!r}")
    return float(boundary)


def _per_axis(values, ndim: int, name: str) -> tuple:
    values = (values,) * ndim if isinstance(values, (int, np.integer)) else tuple(int(v) for v in values)
    if len(values) != ndim:
        raise LiftTypeError(f"{name}: give one value per axis ({ndim}), got {values}")
    return values


def shift(x: LiftArray, offsets, boundary="clamp") -> LiftArray:
    """Accelerator's Shift: `r[i] = x[i - offsets]` per axis; reads outside `x` follow `boundary`."""
    offsets = _per_axis(offsets, x.ndim, "shift")
    if not 1 <= x.ndim <= 3 or 1 in x.shape:
        raise LiftTypeError(f"shift: arrays of one to three dimensions, none of length 1 (reshape it away), got "
                            f"shape {x.shape}")
    if not any(offsets):
        return x
    return LiftArray("shift", (x,), (offsets, _boundary(boundary, "shift")), x.shape, x.dtype)


def rotate(x: LiftArray, offsets) -> LiftArray:
    """Accelerator's Rotate: `r[i] = x[(i - offsets) mod n]` (numpy's `roll`)."""
    return shift(x, offsets, "wrap")


def pad(x: LiftArray, before, after, boundary=0.0) -> LiftArray:
    """Accelerator's Pad (numpy's `pad`): `before`/`after` elements per axis, given by `boundary`."""
    before, after = _per_axis(before, x.ndim, "pad"), _per_axis(after, x.ndim, "pad")
    if min(before + after, default=0) < 0:
        raise LiftTypeError(f"pad: widths must be non-negative, got {before} and {after}")
    shape = tuple(n + b + a for n, b, a in zip(x.shape, before, after))
    return LiftArray("pad", (x,), (before, after, _boundary(boundary, "pad")), shape, x.dtype)


class Window:
    """The neighbourhood `stencil` passes to its function: `w[i, j]` is the array of the elements at
    offset `(i, j) - centre` of each element (a shift of the stencil's array)."""

    def __init__(self, x: LiftArray, size: tuple, boundary):
        self.x, self.size, self.boundary = x, size, boundary
        self.centre = tuple(s // 2 for s in size)

    def __getitem__(self, index) -> LiftArray:
        index = _per_axis((index,) if isinstance(index, (int, np.integer)) else index, self.x.ndim, "window")
        if not all(0 <= i < s for i, s in zip(index, self.size)):
            raise LiftTypeError(f"stencil window {self.size}: index {index} is outside it")
        return shift(self.x, tuple(c - i for c, i in zip(self.centre, index)), self.boundary)


def stencil(x: LiftArray, f, window, boundary="clamp") -> LiftArray:
    """`f(w)` for the `window`-sized neighbourhood `w` of every element (`Window`), an array of `x`'s shape."""
    size = _per_axis(window, x.ndim, "stencil")
    result = f(Window(x, size, _boundary(boundary, "stencil")))
    if not isinstance(result, LiftArray) or result.shape != x.shape:
        raise LiftTypeError(f"stencil: the function must return an array of the shape {x.shape} built from "
                            f"the window, got {result!r}")
    return result


def getitem(x: LiftArray, index) -> LiftArray:
    """`x[...]`: slices with steps of 1 (`x[a:b]`, `x[:, a:b]`) are a view (`section`); integer lift arrays,
    one per axis, gather (`gather`)."""
    index = index if isinstance(index, tuple) else (index,)
    if index and all(isinstance(i, slice) for i in index):
        return section(x, index)
    return gather(x, index)


def section(x: LiftArray, slices: tuple) -> LiftArray:
    """A view of the elements numpy's `x[slices]` selects, for slices with steps of 1 (`take ∘ drop` per axis)."""
    if len(slices) > x.ndim:
        raise LiftTypeError(f"indexing a lift array of shape {x.shape} with {len(slices)} slices")
    bounds = []
    for axis, (s, n) in enumerate(zip(slices + (slice(None),) * (x.ndim - len(slices)), x.shape)):
        start, stop, step = s.indices(n)
        if step != 1 or stop <= start:
            raise LiftTypeError(f"slicing a lift array of shape {x.shape}: axis {axis} takes a non-empty slice with "
                                f"step 1, got {s.start}:{s.stop}:{s.step}")
        bounds.append((start, stop))
    shape = tuple(stop - start for start, stop in bounds)
    if shape == x.shape:
        return x
    if _distributes(x):
        return LiftArray("map", tuple(section(a, slices) if isinstance(a, LiftArray) else a for a in x.args),
                         x.attrs, shape, x.dtype)
    return LiftArray("section", (x,), (tuple(bounds),), shape, x.dtype)


def gather(x: LiftArray, index) -> LiftArray:
    """`x[i, j, ...]` with one integer lift array per axis: gathered elements, indices clipped to the bounds."""
    index = index if isinstance(index, tuple) else (index,)
    index = tuple(_operand(i) for i in index)
    if len(index) != x.ndim or not all(isinstance(i, LiftArray) and i.dtype == np.int32 for i in index):
        raise LiftTypeError(f"indexing a lift array of shape {x.shape}: give one int32 lift array per axis "
                            f"({x.ndim}), got {index!r}")
    shape = np.broadcast_shapes(*(i.shape for i in index))
    return LiftArray("gather", (x,) + index, (), shape, x.dtype)


def _ufunc(name: str):
    return lambda *args: elementwise(name, *args)


UFUNCS = {**{name: _ufunc(name) for name in NUMPY if name != "where"}, "true_divide": _ufunc("divide"),
          **{getattr(f, "__name__", name): _ufunc(name) for name, f in MATH.items()},
          "fmax": maximum, "fmin": minimum, "matmul": matmul}  # numpy's ufunc names
