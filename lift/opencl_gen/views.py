"""Views: data-layout patterns as index arithmetic, never as copies (Lift's views).

`split`, `join`, `zip`, `unzip`, `get`, `transpose`, `reorder-stride`, `asVector`/`asScalar`, `slide`, `pad`,
`pad-to-multiple`, `take`, `drop`, `concat`, and a `map` of any of them (so in N dimensions), emit no loop and no
temporary array. Each wraps the view of its input and rewrites the indices of an access, so that reading element
`[i][j]` of `split-n(x)` reads `x[i*n + j]`. A view resolves to an `Access`: a C expression that reads (and, for memory, writes) one scalar, vector
or struct. Indices are size expressions, simplified with their ranges (`(4*i + j) / 4` is `i` when `0 <= j < 4`).

The same views carry outputs downwards: a producer under `join` writes through a `split` view of the
join's destination, which is how `join ∘ map-workgroup(f)` writes straight into the result.

The vector views are in `lift.opencl_gen.vector_views`; which view each pattern makes, in
`lift.opencl_gen.pattern_views`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field, replace
from typing import Optional

from lift.errors import LiftCodegenError
from lift.ir import patterns as P
from lift.opencl_gen.accesses import Access, ClampedAccess, GuardedAccess, MemAccess, SelectAccess, ValueAccess
from lift.ir.names import fresh_name
from lift.opencl_gen.c_arith import c_arith
from lift.opencl_gen.c_types import c_type_name
from lift.opencl_gen.memory import Memory
from lift.types.arith import ArithExpr, Cst, Var, as_arith
from lift.types.types import ArrayType, TupleType, Type, VectorType, element_type, tuple_field


# --- views ----------------------------------------------------------------------------------------------


class View:
    """A value of type `type` as the kernel sees it; `access(idx)` takes one index per array dimension."""

    type: Type

    def access(self, idx: tuple) -> Access:
        raise LiftCodegenError(f"{type(self).__name__} of {self.type} has no single element to access")

    def get(self, k: int) -> "View":
        raise LiftCodegenError(f"{self.type} has no tuple component {k}")

    def index(self, i) -> "View":
        return IndexView(self, as_arith(i))

    @property
    def memory(self) -> Optional[Memory]:
        """The memory this view lays out row-major and unchanged, if it is one."""
        return None


@dataclass(eq=False)
class MemView(View):
    """A memory holding a value of `type` row-major; `prefix` selects a slice by `(index, length)` pairs."""

    mem: Memory
    type: Type
    prefix: tuple = ()
    field: str = ""

    def access(self, idx: tuple) -> Access:
        flat = Cst(0)
        for i, n in self.prefix:
            flat = flat * n + i
        t = self.type
        for i in idx:
            if not isinstance(t, ArrayType):
                raise LiftCodegenError(f"too many indices for {self.type}")
            flat = flat * t.length + i
            t = t.elem
        if isinstance(t, ArrayType):
            raise LiftCodegenError(f"{self.type} needs {len(idx) + 1} or more indices")
        if isinstance(t, VectorType):
            return MemAccess(mem=self.mem, index=flat * t.width, width=t.width, field=self.field,
                             field_vector=t if self.field else None)
        return MemAccess(mem=self.mem, index=flat, width=1, field=self.field)

    def get(self, k: int) -> View:
        elem = element_type(self.type)
        if not isinstance(elem, TupleType):
            raise LiftCodegenError(f"{self.type} has no tuple component {k}")
        return MemView(self.mem, _replace_element(self.type, elem.elems[k]), self.prefix,
                       f"{self.field}.{tuple_field(k)}")

    @property
    def memory(self) -> Optional[Memory]:
        return self.mem if not self.prefix and not self.field else None


@dataclass(eq=False)
class OwnedView(MemView):
    """A private memory holding a value of which each work-item has only the part of its own `map-local` ids
    (Lift's collapse of private memory): `owned` names the dimensions, `(position, dim)`, whose index must be the
    id of the enclosing `map-local[dim]`, and which the memory does not lay out. `scope` is the emitter's
    (`(kind, dim, index, length)` of the loops around the access), read when an access is made.

    A work-group's private accumulator (`toPrivate(reduce-seq(..))` at work-group level) is one: each work-item
    updates, inside `map-local`s, only the elements of its ids."""

    owned: tuple = ()
    scope: list = field(default_factory=list)

    def access(self, idx: tuple) -> Access:
        positions = [p for p, _ in self.owned]
        for p, d in self.owned:
            i = idx[p] if p < len(idx) else None
            if not any(k == "lcl" and dim == d and j == i for k, dim, j, _ in self.scope):
                raise LiftCodegenError(
                    f"the private memory {self.mem.name} of {self.type} holds, in each work-item, only the elements "
                    f"of its own map-local[{d}] id along dimension {p}; it is accessed at {i} there")
        kept = tuple(i for p, i in enumerate(idx) if p not in positions)
        return MemView(self.mem, _dropped(self.type, positions), self.prefix, self.field).access(kept)

    def get(self, k: int) -> View:
        view = MemView.get(self, k)
        return OwnedView(view.mem, view.type, view.prefix, view.field, self.owned, self.scope)

    @property
    def memory(self) -> Optional[Memory]:
        return None


def root(view: View) -> View:
    """The view an element of `view` is indexed or rearranged from (a `MemView` where it is in memory)."""
    while isinstance(view, (IndexView, _IndexMap)):
        view = view.parent if isinstance(view, IndexView) else view.inner
    return view


def _dropped(t: Type, positions: list) -> Type:
    """`t` without the dimensions at `positions`."""
    if not positions or not isinstance(t, ArrayType):
        return t
    inner = _dropped(t.elem, [p - 1 for p in positions if p > 0])
    return inner if 0 in positions else ArrayType(inner, t.length)


@dataclass(eq=False)
class IndexView(View):
    """Element `i` of an array view."""

    parent: View
    i: ArithExpr

    def __post_init__(self):
        if not isinstance(self.parent.type, ArrayType):
            raise LiftCodegenError(f"cannot index into {self.parent.type}")
        self.type = self.parent.type.elem

    def access(self, idx: tuple) -> Access:
        return self.parent.access((self.i,) + tuple(idx))

    def get(self, k: int) -> View:
        return IndexView(self.parent.get(k), self.i)


def memory_row(view: View) -> Optional[tuple]:
    """`(memory, first element, lets)` where `view` is laid out row-major and unchanged in one memory: the memory
    itself, or a row of it reached by indexing its outer dimensions (`get-0(q)` of `q` in `zip(a, labels)`, a row
    of `a`), through views that rearrange those alone (split, join, transpose, take, drop), a row past the end of
    one padded with copies of its last (`pad-to-multiple-k(clamp)`) being that last row. A user function's array
    argument is passed as a pointer to it; any other view has no such pointer (a row of a constant is in no
    memory)."""
    if view.memory is not None:
        return view.memory, Cst(0), ()
    indices, lets, inner = (), [], view
    while not isinstance(inner, MemView):
        if isinstance(inner, IndexView):
            indices, inner = (inner.i,) + indices, inner.parent
        elif isinstance(inner, PadView) and inner.boundary == "clamp" and indices:
            var = Var(fresh_name("pad"), 0, inner.length)
            lets.append((var, f"clamp({c_arith(indices[0] - inner.left)}, 0, ({c_arith(inner.length)}) - 1)"))
            indices, inner = (var,) + indices[1:], inner.inner
        elif len(indices) >= _OUTER_INDICES.get(type(inner), len(indices) + 1):
            indices, inner = inner.remap(indices), inner.inner
        else:
            return None
    if inner.field or inner.mem.scalar_variable or isinstance(inner.mem.elem, VectorType):
        return None
    depth, t = 0, view.type
    while isinstance(t, ArrayType):
        depth, t = depth + 1, t.elem
    return inner.mem, inner.access(indices + (Cst(0),) * depth).index, tuple(lets)


@dataclass(eq=False)
class ValueView(View):
    """A value given by a C expression (a literal or a private variable's value)."""

    text: str
    type: Type

    def access(self, idx: tuple) -> Access:
        return ValueAccess(text=self.text)

    def get(self, k: int) -> View:
        if not isinstance(self.type, TupleType):
            raise LiftCodegenError(f"{self.type} has no tuple component {k}")
        return ValueView(f"{self.text}.{tuple_field(k)}", self.type.elems[k])


@dataclass(eq=False)
class TupleView(View):
    """A tuple of values or arrays: `zip(a, b)` (an array of tuples) or `tuple(a, b)` (one tuple).

    An array of tuples whose components live in memories of their own (the inverse of `unzip`, a
    program's several outputs) is one too: indexing it indexes every part.
    """

    parts: tuple
    type: Type

    def get(self, k: int) -> View:
        return self.parts[k]


class _IndexMap(View, ABC):
    """A view that rewrites the outermost indices of its input's accesses."""

    inner: View

    @abstractmethod
    def remap(self, idx: tuple) -> tuple:
        """The input's indices for this view's indices."""

    def access(self, idx: tuple) -> Access:
        return self.inner.access(self.remap(tuple(idx)))

    def get(self, k: int) -> View:
        return replace(self, inner=self.inner.get(k), type=component_type(self.type, k))


@dataclass(eq=False)
class SplitView(_IndexMap):
    """`split-n`: element `[i][j]` is the input's `[i*n + j]`."""

    inner: View
    n: ArithExpr
    type: Type

    def remap(self, idx):
        return (idx[0] * self.n + idx[1],) + idx[2:]

    @property
    def memory(self):
        return self.inner.memory


@dataclass(eq=False)
class JoinView(_IndexMap):
    """`join`: element `[i]` is the input's `[i / m][i mod m]`, `m` the inner length."""

    inner: View
    m: ArithExpr
    type: Type

    def remap(self, idx):
        return (idx[0] // self.m, idx[0] % self.m) + idx[1:]

    @property
    def memory(self):
        return self.inner.memory


@dataclass(eq=False)
class TransposeView(_IndexMap):
    """`transpose`: element `[i][j]` is the input's `[j][i]`."""

    inner: View
    type: Type

    def remap(self, idx):
        return (idx[1], idx[0]) + idx[2:]


@dataclass(eq=False)
class ReorderStrideView(_IndexMap):
    """`reorder-stride-s`: element `[i]` is the input's `[i/n + s*(i mod n)]`, `n*s` the length (paper 3.2)."""

    inner: View
    s: ArithExpr
    length: ArithExpr
    type: Type

    def remap(self, idx):
        n = self.length / self.s
        return (idx[0] // n + self.s * (idx[0] % n),) + idx[1:]


@dataclass(eq=False)
class SlideView(_IndexMap):
    """`slide(size, step)`: element `[i][j]` is the input's `[i*step + j]`."""

    inner: View
    step: int
    type: Type

    def remap(self, idx):
        return (idx[0] * self.step + idx[1],) + idx[2:]


@dataclass(eq=False)
class PadView(View):
    """`pad(l, r, boundary)`: element `[i]` is the input's `[i - l]`, brought back into range at the edges.

    `boundary` is a mode of `P.PAD_MODES` or the C literal of a constant (a scalar, also for arrays of arrays:
    every element of a padded row is the constant)."""

    inner: View
    left: int
    length: ArithExpr
    boundary: object
    type: Type

    def access(self, idx: tuple) -> Access:
        j = c_arith(idx[0] - self.left)
        n = c_arith(self.length)
        if self.boundary not in P.PAD_MODES and self.left == 0:  # padded on the right only: one bound to check
            inner = self.inner.access(tuple(idx))
            return GuardedAccess(lets=inner.lets, condition=f"{j} < {n}", inner=inner, default=self.boundary)
        if self.boundary not in P.PAD_MODES:
            var = Var(fresh_name("pad"), 0, None)
            inner = self.inner.access((var,) + tuple(idx[1:]))
            return GuardedAccess(lets=inner.lets + ((var, j),), condition=f"{var.name} >= 0 && {var.name} < {n}",
                                 inner=inner, default=self.boundary)
        clamped = {
            "clamp": f"clamp({j}, 0, ({n}) - 1)",
            "wrap": self._wrapped(j, n),
            "mirror": f"(({j}) < 0 ? -1 - ({j}) : (({j}) >= ({n}) ? 2 * ({n}) - 1 - ({j}) : ({j})))",
        }[self.boundary]
        var = Var(fresh_name("pad"), 0, self.length)
        inner = _with_lets(self.inner.access((var,) + tuple(idx[1:])), ((var, clamped),))
        direct = self.inner.access((idx[0] - self.left,) + tuple(idx[1:]))
        inside = f"{j} >= 0 && {j} < {n}"
        names = frozenset(v.name for v in (idx[0] - self.left).free_vars())
        ranges = ((idx[0] - self.left, self.length),)
        row, row_inside, row_vars, row_ranges, inside_vars = direct, inside, names, ranges, names
        if isinstance(direct, ClampedAccess):  # padded in an inner dimension too
            direct, inside, inside_vars, ranges = (direct.direct, f"{inside} && {direct.inside}",
                                                   names | direct.inside_vars, ranges + direct.inside_ranges)
            row, row_inside, row_vars, row_ranges = (
                (inner.row, inner.row_inside, inner.row_vars, inner.row_ranges) if isinstance(inner, ClampedAccess)
                else (None, "", frozenset(), ()))
        if isinstance(inner, MemAccess) and type(direct) is MemAccess and not direct.lets:
            return ClampedAccess(**{f: getattr(inner, f) for f in ("lets", "mem", "index", "width", "field")},
                                 direct=direct, inside=inside, row=row, row_inside=row_inside,
                                 inside_vars=inside_vars, row_vars=row_vars, inside_ranges=ranges,
                                 row_ranges=row_ranges)
        return inner

    def _wrapped(self, j: str, n: str) -> str:
        """Index `j` (from `-left` to `length + right - 1`) brought back into `[0, length)` modulo `length`: one
        comparison each way where neither pad is longer than the array (as a 3x3 stencil's of 1 on a torus), so
        that `j` is at most one length out; else C's `%`, made non-negative."""
        right = self.type.length - self.length - self.left
        longest = max(self.left, right.value if right.is_constant else self.left)
        known = self.length.value if self.length.is_constant else 1
        if right.is_constant and longest <= known:
            return f"(({j}) < 0 ? ({j}) + ({n}) : (({j}) >= ({n}) ? ({j}) - ({n}) : ({j})))"
        return f"((({j}) % ({n})) + ({n})) % ({n})"

    def get(self, k: int) -> View:
        return PadView(self.inner.get(k), self.left, self.length, self.boundary, component_type(self.type, k))


@dataclass(eq=False)
class TakeView(_IndexMap):
    """`take-n`: element `[i]` is the input's `[i]` (a shorter type)."""

    inner: View
    type: Type

    def remap(self, idx):
        return idx


@dataclass(eq=False)
class DropView(_IndexMap):
    """`drop-n`: element `[i]` is the input's `[i + n]`."""

    inner: View
    n: ArithExpr
    type: Type

    def remap(self, idx):
        return (idx[0] + self.n,) + idx[1:]


@dataclass(eq=False)
class ConcatView(View):
    """`concat(a, b, ..)`: element `[i]` is `a[i]` where `i < m` (`a`'s length), else the next parts' `[i - m]`."""

    parts: tuple
    type: Type

    def access(self, idx: tuple) -> Access:
        (first, *rest), i = self.parts, idx[0]
        m = first.type.length
        second = rest[0] if len(rest) == 1 else ConcatView(tuple(rest), ArrayType(self.type.elem, self.type.length - m))
        a, b = first.access(tuple(idx)), second.access((i - m,) + tuple(idx[1:]))
        return SelectAccess(lets=a.lets + b.lets, condition=f"{c_arith(i)} < {c_arith(m)}", parts=(a, b))

    def get(self, k: int) -> View:
        return ConcatView(tuple(p.get(k) for p in self.parts), component_type(self.type, k))


_OUTER_INDICES = {SplitView: 2, JoinView: 1, TransposeView: 2, TakeView: 1, DropView: 1}
"""The views that rearrange only their outer indices, and how many (`memory_row` passes a row through them)."""


@dataclass(eq=False)
class DroppingView(View):
    """The destination of `x` in `take-n(x)`: element `[i]` is `out`'s `[i]`, written only where `i < n`."""

    out: View
    n: ArithExpr
    type: Type

    def access(self, idx: tuple) -> Access:
        inner = self.out.access(tuple(idx))
        return GuardedAccess(lets=inner.lets, condition=f"{c_arith(idx[0])} < {c_arith(self.n)}", inner=inner)

    def get(self, k: int) -> View:
        return DroppingView(self.out.get(k), self.n, component_type(self.type, k))


def _with_lets(a: Access, lets: tuple) -> Access:
    return replace(a, lets=lets + a.lets)


def _replace_element(t: Type, new: Type) -> Type:
    if isinstance(t, ArrayType):
        return ArrayType(_replace_element(t.elem, new), t.length)
    return new


def component_type(t: Type, k: int) -> Type:
    """The type of component `k` of a tuple, or of an array of tuples (the array of the components)."""
    elem = element_type(t)
    if not isinstance(elem, TupleType):
        raise LiftCodegenError(f"{t} has no tuple component {k}")
    return _replace_element(t, elem.elems[k])


# --- values ---------------------------------------------------------------------------------------------


def read(view: View) -> tuple:
    """The C expression of a (non-array) value and the lets it needs: structs not in memory are built from parts."""
    t = view.type
    if isinstance(t, ArrayType):
        raise LiftCodegenError(f"an array ({t}) is not a value: pass it element by element")
    try:
        a = view.access(())
    except LiftCodegenError:
        if not isinstance(t, TupleType):
            raise
        parts = [read(view.get(k)) for k in range(len(t.elems))]
        lets = tuple(l for _, ls in parts for l in ls)
        return f"({c_type_name(t)}){{{', '.join(p for p, _ in parts)}}}", lets
    return a.read(), a.lets


def write(view: View, value: str) -> tuple:
    """The C statement that stores `value` into a (non-array) view, and the lets it needs."""
    a = view.access(())
    return a.write(value), a.lets
