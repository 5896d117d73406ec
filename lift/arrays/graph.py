"""An expression graph of lift arrays as ONE lift high-level program, and its structural key.

`structure` walks the graph from the arrays asked for: its key (operators, attributes, shapes, dtypes and
constants, leaves numbered in order of first use, so equal graphs over other data share a key) and its
leaves (the program's parameters; a leaf used twice is one parameter). `build` writes the program:

- a *region* is a maximal tree of element-wise operations (`map`), gathers and shifts over one shape: one
  `map` per axis over `zip`s of the arrays it reads, applying ONE generated user function whose body is the
  tree (Accelerator's fused shader); arrays broadcast along an axis are closed over instead of zipped;
- a reduction of a region reduces its last axis inside the innermost map (`reduce(+) ∘ map(*) ∘ zip`: dot,
  gemv and matrix multiply are regions reduced);
- the shifts of one array in a region read one window of it (`slide ∘ pad`, the stencil views), copied to
  private memory and indexed by the user function; a gather closes over the whole array;
- transposes, reshapes, pads and slices are views (`transpose`, `split`/`join`, `pad`, `take ∘ drop`); a 0-d
  array is a 1-element array (a reduction's result); a computed array used twice is let-bound, so it is
  computed once.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from lift.arrays.array import LiftArray, lift_type
from lift.arrays.operators import COMPARISONS, MATH
from lift.errors import LiftError
from lift.ir.nodes import Lambda, Literal, Param
from lift.ir.opencl_patterns import ToPrivate
from lift.ir.typecheck import infer
from lift.ir.patterns import Drop, Get, Join, Map, MapSeq, Pad, Reduce, Slide, Split, Take, Transpose, Tuple, Zip
from lift.ir.userfun import userfun
from lift.types.types import ArrayType

_VIEWS = ("transpose", "reshape", "pad", "section")
_INFIX = {"add": "+", "subtract": "-", "multiply": "*", "divide": "/", "logical_and": "and", "logical_or": "or",
          **dict(zip(COMPARISONS, ("<", "<=", ">", ">=", "==", "!=")))}
_REDUCE = {"add": "x + y", "max": "max(x, y)", "min": "min(x, y)"}


@dataclass(frozen=True)
class Structure:
    """A graph's key and its leaves in parameter order; `nodes` every node, operands first."""

    key: str
    inputs: tuple
    nodes: tuple


def structure(targets) -> Structure:
    """The structural key of the graph below `targets` (see the module docstring)."""
    number, rows, inputs = {}, [], []
    out = tuple(_visit(t, number, rows, inputs) for t in targets)
    key = hashlib.sha256(repr((rows, out)).encode()).hexdigest()[:24]
    return Structure(key, tuple(inputs), tuple(number))


def _visit(n: LiftArray, number: dict, rows: list, inputs: list) -> int:
    """`n`'s number in `structure`, its operands numbered first (a module function, not a closure: a
    recursive closure is a reference cycle, which would keep the graph and its device buffers alive
    until the garbage collector runs)."""
    if n in number:
        return number[n]
    if n.op == "input":
        inputs.append(n)
        row = ("input", n.shape, n.dtype.str)
    else:
        args = tuple(("n", _visit(a, number, rows, inputs)) if isinstance(a, LiftArray)
                     else ("c", type(a).__name__, repr(a)) for a in n.args)
        row = (n.op, n.attrs, n.shape, n.dtype.str, args)
    number[n] = len(rows)
    rows.append(row)
    return number[n]


def array_type(shape: tuple, dtype) -> ArrayType:
    """The lift type of an array of this numpy shape (a 0-d array is a 1-element array)."""
    t = lift_type(dtype)
    for n in reversed(shape or (1,)):
        t = ArrayType(t, n)
    return t


def build(targets, st: Structure) -> Lambda:
    """The lift program computing `targets` from `st.inputs` (a `Tuple` of results for several)."""
    shared: set = set()
    while True:
        builder = _Builder(shared)
        params = tuple(Param(f"input{i}", array_type(n.shape, n.dtype)) for i, n in enumerate(st.inputs))
        body = builder.program(dict(zip(st.inputs, params)), targets)
        if not builder.found:
            program = Lambda(params, body)
            infer(program)
            return program
        shared |= builder.found


def _nest(depth: int, f):
    for _ in range(depth):
        f = Map(f)
    return f


def transpose_expr(e, axes: tuple):
    """`e` with its axes permuted as numpy's `transpose(axes)`: adjacent swaps, `map^d(transpose)`."""
    current = list(range(len(axes)))
    for i, a in enumerate(axes):
        j = current.index(a)
        while j > i:
            current[j - 1], current[j] = current[j], current[j - 1]
            e = _nest(j - 1, Transpose())(e)
            j -= 1
    return e


def reshape_expr(e, old: tuple, new: tuple):
    """`e` of shape `old` viewed with shape `new`: joined flat, then split from the innermost axis."""
    if old == new:
        return e
    for _ in range(len(old) - 1):
        e = Join()(e)
    for n in reversed(new[1:]):
        e = Split(n)(e)
    return e


def stored(n: LiftArray) -> bool:
    """Whether `n` is an input or a view of one (what a window or a let can read without computing)."""
    while n.op in _VIEWS:
        n = n.args[0]
    return n.op == "input"


def _squeezed(shape: tuple) -> tuple:
    return tuple(n for n in shape if n != 1)


SOURCES: dict = {}  # a generated user function's name -> its Python source (for `lift.explain`)


@lru_cache(maxsize=4096)
def _userfun(source: str):
    f = userfun(source=source)
    SOURCES[f.name] = source
    return f


def _type_source(t) -> str:
    return f"ArrayType({_type_source(t.elem)}, {t.length})" if isinstance(t, ArrayType) else t.name.capitalize()


def _literal(value, dtype) -> str:
    if dtype.kind == "b":
        return repr(bool(value))
    if dtype.kind == "i":
        return str(int(value))
    if not np.isfinite(value):
        return f"{lift_type(dtype).name.capitalize()}({'-' if value < 0 else ''}math.inf)"
    return f"Double({float(value)!r})" if dtype == np.float64 else repr(float(value))


def _cast(text: str, old, new) -> str:
    if old == new:
        return text
    if old.kind == "b":
        return f"({_literal(1, new)} if {text} else {_literal(0, new)})"
    return f"({text} != 0)" if new.kind == "b" else f"{lift_type(new).name.capitalize()}({text})"


@dataclass
class _Leaf:
    """An array a region reads: `element` (zipped along `axes`), `window` (a shifted array's neighbourhood),
    `scalar` (a 0-d array, closed over) or `whole` (a gathered array, closed over)."""

    kind: str
    node: LiftArray
    axes: tuple
    name: str
    boundary: object = None
    lo: list = field(default_factory=list)
    hi: list = field(default_factory=list)


class _Region:
    """One region (module docstring): its leaves and the source of its user function."""

    def __init__(self, builder: "_Builder", root: LiftArray):
        self.builder, self.root = builder, root
        self.reduction = root.attrs[0] if root.op == "reduce" else None
        self.body = root.args[0] if self.reduction else root
        self.shape = self.body.shape
        kept = [k for k, n in enumerate(self.shape) if n != 1]
        self.axis = {k: i for i, k in enumerate(kept)}
        self.scalar_region = not kept
        self.leaves: dict = {}
        self.text = self._scalar(self.body, tuple(range(len(self.shape))))

    def _leaf(self, kind: str, node: LiftArray, axes: tuple, boundary=None) -> _Leaf:
        key = (kind, node, axes, boundary)
        if key not in self.leaves:
            self.leaves[key] = _Leaf(kind, node, axes, f"{kind[0]}{len(self.leaves)}", boundary,
                                     [0] * node.ndim, [0] * node.ndim)
        return self.leaves[key]

    def _fused(self, n: LiftArray) -> bool:
        return n.op in ("map", "gather", "shift") and (n is self.body or n not in self.builder.shared)

    def _repeated(self, n: LiftArray) -> bool:
        """Whether `n`, a view of a fused array with axes of length 1 that the region broadcasts along (a matrix
        product's operand), would repeat the fused computation once per element of those axes: it is read as a
        computed array instead, let-bound, so computed once (attention's `exp(s - max) / sum` once per element,
        not once per column of `V`: 300 ms to 32 ms at 257x61 on PoCL)."""
        return self._fused(n.args[0]) and np.prod(self.shape) > np.prod(n.shape)

    def _scalar(self, n, place: tuple) -> str:
        """The source of `n`'s element at the region's index; `place[j]` is the region axis of `n`'s axis `j`
        (None where `n` is broadcast along it)."""
        if not isinstance(n, LiftArray):
            return repr(n)
        if n.op == "reshape" and _squeezed(n.shape) == _squeezed(n.args[0].shape) and not self._repeated(n):
            base = n.args[0]
            places = iter(p for p, size in zip(place, n.shape) if size != 1)
            return self._scalar(base, tuple(next(places) if size != 1 else None for size in base.shape))
        if self._fused(n) and n.op == "shift" and (n.shape != self.shape or 1 in n.shape
                                                   or place != tuple(range(len(self.shape)))):
            return self._element(n, place)
        if self._fused(n) and n.op == "shift":
            offsets, boundary = n.attrs
            leaf = self._leaf("window", n.args[0], (), boundary)
            reads = [-s for s in offsets]
            leaf.lo = [min(lo, r) for lo, r in zip(leaf.lo, reads)]
            leaf.hi = [max(hi, r) for hi, r in zip(leaf.hi, reads)]
            return leaf.name + "".join(f"[@{j}:{r}@]" for j, r in enumerate(reads))
        if self._fused(n) and n.op == "gather":
            whole = self._leaf("whole", n.args[0], ())
            index = [self._cast_arg(i, n, place, np.dtype(np.int32)) for i in n.args[1:]]
            return whole.name + "".join(f"[min(max({i}, 0), {size - 1})]" for i, size in zip(index, n.args[0].shape))
        if self._fused(n) and n.op == "map":
            return self._map(n, place)
        return self._element(n, place)

    def _element(self, n: LiftArray, place: tuple) -> str:
        if not n.shape and not self.scalar_region:
            return self._leaf("scalar", n, ()).name + "[0]"
        axes = (0,) if self.scalar_region else tuple(self.axis[p] for p, size in zip(place, n.shape)
                                                     if p is not None and size != 1)
        return self._leaf("element", n, axes).name

    def _cast_arg(self, a, parent: LiftArray, place: tuple, dtype) -> str:
        if not isinstance(a, LiftArray):
            return _literal(a, dtype)
        offset = parent.ndim - a.ndim
        child = tuple(None if size == 1 and parent.shape[j + offset] != 1 else place[j + offset]
                      for j, size in enumerate(a.shape))
        return _cast(self._scalar(a, child), a.dtype, dtype)

    def _map(self, n: LiftArray, place: tuple) -> str:
        op = n.attrs[0]
        dtype = n.dtype
        if op in COMPARISONS:
            dtype = np.add(*(np.empty(0, a.dtype) if isinstance(a, LiftArray) else a for a in n.args)).dtype
        if op == "astype":
            return self._cast_arg(n.args[0], n, place, n.dtype)
        if op == "where":
            c, x, y = (self._cast_arg(a, n, place, t) for a, t in zip(n.args, (np.dtype(bool), dtype, dtype)))
            return f"({x} if {c} else {y})"
        if op == "power" and isinstance(n.args[1], (int, float)) and n.args[1] == 2:
            x = self._cast_arg(n.args[0], n, place, dtype)
            return f"({x} * {x})"
        args = [self._cast_arg(a, n, place, dtype) for a in n.args]
        if op in _INFIX:
            return f"({args[0]} {_INFIX[op]} {args[1]})"
        if op == "power":
            return f"({args[0]} ** {args[1]})"
        named = {"maximum": "max", "minimum": "min", "negative": "-", "absolute": "abs",
                 "logical_not": "not "}
        if op in MATH:
            return f"math.{op}({', '.join(args)})"
        return f"{named[op]}({', '.join(args)})"

    def expr(self):
        """The region's program: maps over zipped leaves, applying its user function, reduced if asked."""
        leaves = list(self.leaves.values())
        dims = 1 if self.scalar_region else len(self.axis)
        text, params = self.text, []
        for leaf in leaves:
            t = lift_type(leaf.node.dtype)
            if leaf.kind == "window":
                t = array_type(tuple(h - lo + 1 for lo, h in zip(leaf.lo, leaf.hi)), leaf.node.dtype)
                for j in range(leaf.node.ndim):
                    for r in range(leaf.lo[j], leaf.hi[j] + 1):
                        text = text.replace(f"[@{j}:{r}@]", f"[{r - leaf.lo[j]}]")
            elif leaf.kind != "element":
                t = array_type(leaf.node.shape, leaf.node.dtype)
            params.append(f"{leaf.name}: {_type_source(t)}")
        out = lift_type(self.body.dtype)
        signature = f"({', '.join(params)}) -> {_type_source(out)}:\n    return {text}\n"
        f = _userfun(f"def ew_{hashlib.sha256(signature.encode()).hexdigest()[:12]}{signature}")
        states = [self._leaf_expr(leaf) for leaf in leaves]
        identity = len(leaves) == 1 and text == leaves[0].name
        e = self._nest(0, dims, leaves, states, [0] * len(leaves), f, identity)
        if self.reduction and dims > 1:
            e = _nest(dims - 2, Join())(e)
        shape = self.root.shape
        computed = tuple(n for n in shape if n != 1) or (1,)
        return reshape_expr(e, computed, shape) if computed != (shape or (1,)) else e

    def _leaf_expr(self, leaf: _Leaf):
        if leaf.kind == "element":
            shape = leaf.node.shape
            return reshape_expr(self.builder.expr(leaf.node), shape or (1,), _squeezed(shape) or (1,))
        if leaf.kind != "window":
            return self.builder.expr(leaf.node)
        e = self.builder.viewed(leaf.node)                   # a window reads memory
        boundary = leaf.boundary if isinstance(leaf.boundary, str) else Literal(leaf.boundary,
                                                                               lift_type(leaf.node.dtype))
        sizes = [h - lo + 1 for lo, h in zip(leaf.lo, leaf.hi)]
        for j in reversed(range(leaf.node.ndim)):
            e = _nest(j, Pad(-leaf.lo[j], leaf.hi[j], boundary))(e)
        for j in reversed(range(leaf.node.ndim)):
            e = _nest(j, Slide(sizes[j], 1))(e)
        d = leaf.node.ndim                                   # [n0][s0][n1][s1]... -> [n0][n1]...[s0][s1]...
        return transpose_expr(e, tuple(range(0, 2 * d, 2)) + tuple(range(1, 2 * d, 2)))

    def _apply(self, f, leaves, states):
        args = []
        for leaf, s in zip(leaves, states):
            if leaf.kind == "window":
                copy = _userfun(f"def id_{leaf.node.dtype.name}(x: {_type_source(lift_type(leaf.node.dtype))}) -> "
                                f"{_type_source(lift_type(leaf.node.dtype))}:\n    return x\n")
                private = copy
                for _ in range(leaf.node.ndim):
                    private = MapSeq(private)
                s = ToPrivate(private)(s)
            args.append(s)
        return f(*args)

    def _nest(self, depth: int, dims: int, leaves, states, pos, f, identity: bool):
        zipped = [i for i, leaf in enumerate(leaves) if leaf.kind in ("element", "window")
                  and (leaf.kind == "window" or (pos[i] < len(leaf.axes) and leaf.axes[pos[i]] == depth))]
        if self.reduction and depth == dims - 1:
            inner = states[zipped[0]] if len(zipped) == 1 else Zip(*(states[i] for i in zipped))
            if not identity:
                p = Param(f"elem{depth}")
                inner = Map(Lambda((p,), self._apply(f, leaves, self._bound(states, zipped, pos, p)[0])))(inner)
            return Reduce(_reducer(self.reduction, self.body.dtype), _neutral(self.reduction, self.body.dtype))(inner)
        if depth == dims:
            return self._apply(f, leaves, states)
        if not zipped:
            raise LiftError(f"lift arrays: no array spans axis {depth} of a region of shape {self.shape}")
        source = states[zipped[0]] if len(zipped) == 1 else Zip(*(states[i] for i in zipped))

        p = Param(f"elem{depth}")
        inner_states, inner_pos = self._bound(states, zipped, pos, p)
        return Map(Lambda((p,), self._nest(depth + 1, dims, leaves, inner_states, inner_pos, f, identity)))(source)

    @staticmethod
    def _bound(states, zipped, pos, p):
        states, pos = list(states), list(pos)
        for k, i in enumerate(zipped):
            states[i] = p if len(zipped) == 1 else Get(p, k)
            pos[i] += 1
        return states, pos


def _reducer(op: str, dtype):
    t = _type_source(lift_type(dtype))
    return _userfun(f"def {op}_{dtype.name}(x: {t}, y: {t}) -> {t}:\n    return {_REDUCE[op]}\n")


def _neutral(op: str, dtype) -> Literal:
    if op == "add":
        value = 0
    elif dtype.kind == "f":
        value = -np.inf if op == "max" else np.inf
    else:
        value = np.iinfo(dtype).min if op == "max" else np.iinfo(dtype).max
    return Literal(float(value) if dtype.kind == "f" else int(value), lift_type(dtype))


class _Builder:
    """Writes the program of one graph; computed arrays used twice are added to `found` (then let-bound)."""

    def __init__(self, shared: set):
        self.shared = shared
        self.found: set = set()
        self.memo: dict = {}
        self.uses: dict = {}

    def program(self, params: dict, targets):
        self.memo.update(params)
        return self._bind(sorted(self.shared, key=lambda n: n.serial), 0, targets)

    def _bind(self, lets: list, i: int, targets):
        """The program from the `i`-th let-bound array on: `(λ let_i. rest)(value_i)`, the results last."""
        if i == len(lets):
            outputs = [self._output(t) for t in targets]
            return outputs[0] if len(outputs) == 1 else Tuple(*outputs)
        value = self._compute(lets[i])
        self.memo[lets[i]] = v = Param(f"let{i}")
        return Lambda((v,), self._bind(lets, i + 1, targets))(value)

    def _output(self, n: LiftArray):
        """A result in memory of its own: an input, a view or a let-bound value is copied by a region."""
        if n.op in _VIEWS + ("input",) or n in self.shared:
            return _Region(self, LiftArray("map", (n,), ("astype",), n.shape, n.dtype)).expr()
        return self.expr(n)

    def expr(self, n: LiftArray):
        """The program's value of `n`, of its shape (a 0-d array as a 1-element array)."""
        if n in self.memo:
            return self.memo[n]
        if n.op not in _VIEWS:
            self.uses[n] = self.uses.get(n, 0) + 1
            if self.uses[n] > 1:
                self.found.add(n)
        return self._compute(n)

    def viewed(self, n: LiftArray):
        """The program's value of an array a view reads: a computed one is let-bound (in memory)."""
        if not stored(n) and n not in self.shared:
            self.found.add(n)
        return self.expr(n)

    def _compute(self, n: LiftArray):
        if n.op == "transpose":
            return transpose_expr(self.viewed(n.args[0]), n.attrs[0])
        if n.op == "reshape":
            return reshape_expr(self.viewed(n.args[0]), n.args[0].shape or (1,), n.shape or (1,))
        if n.op == "section":
            e = self.viewed(n.args[0])
            for j, ((start, stop), length) in enumerate(zip(n.attrs[0], n.args[0].shape)):
                if start:
                    e = _nest(j, Drop(start))(e)
                if stop != length:
                    e = _nest(j, Take(stop - start))(e)
            return e
        if n.op == "pad":
            before, after, boundary = n.attrs
            boundary = boundary if isinstance(boundary, str) else Literal(boundary, lift_type(n.dtype))
            e = self.viewed(n.args[0])
            for j in range(n.ndim):
                e = _nest(j, Pad(before[j], after[j], boundary))(e)
            return e
        return _Region(self, n).expr()
