"""The vector views: `asVector-n` and `asScalar` (Table 2) as index arithmetic over their input's view.

`asVector-n` reads `n` lanes as one vector load where they are adjacent in one memory, also at the edges of a
padded or clamped array (a load guarded by a test of its first and last lanes), and gathers them otherwise;
`asScalar` reads lane `i mod n` of a vector in memory.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Optional

from lift.errors import LiftCodegenError
from lift.opencl_gen.accesses import Access, ClampedAccess, GatherAccess, GuardedAccess, MemAccess
from lift.opencl_gen.views import View
from lift.types.arith import Cst
from lift.types.types import Type, VectorType, element_type


@dataclass(eq=False)
class AsVectorView(View):
    """`asVector-n`: vector `[..][i]` is the input's scalars `[..][n*i .. n*i + n-1]`, one vector load if adjacent."""

    inner: View
    n: int
    type: Type

    def access(self, idx: tuple) -> Access:
        *outer, i = idx
        lanes = [self.inner.access(tuple(outer) + (i * self.n + k,)) for k in range(self.n)]
        return _vector(lanes, self.n, element_type(self.type))


def _identifiers(condition: str) -> frozenset:
    """The names of the variables a bounds condition reads."""
    return frozenset(re.findall(r"\b[A-Za-z_]\w*", condition))


def _vector(lanes: list, n: int, vtype: VectorType) -> Access:
    """The access of `n` lanes read as one vector of type `vtype`: one vector load where they are adjacent, a
    guarded one where they are adjacent within the edges of a padded array, else gathered."""
    first, last = lanes[0], lanes[-1]
    if _adjacent(_identified(lanes)):
        return MemAccess(lets=first.lets, mem=first.mem, index=first.index, width=n)
    lets = tuple(l for a in lanes for l in a.lets)
    gathered = GatherAccess(lets=lets, parts=tuple(lanes), vtype=vtype)
    guarded = all(isinstance(a, GuardedAccess) and a.default == first.default and a.bounds is None for a in lanes)
    if guarded and _adjacent(_identified([a.inner for a in lanes])):
        # a padded array: one vector load where the first and last lanes are in range (so all between are)
        vector = MemAccess(mem=first.inner.mem, index=first.inner.index, width=n)
        return GuardedAccess(lets=lets, condition=f"({first.condition}) && ({last.condition})", inner=vector,
                             default=gathered.read() if first.default else "", lanes=tuple(lanes), vtype=vtype)
    if guarded and not first.lanes:
        # a padded array of clamped lanes (the windows of a stencil padded to a multiple): a clamped vector
        # read where the first and last lanes are in range
        inner = _vector([a.inner for a in lanes], n, vtype)
        if isinstance(inner, GuardedAccess) and inner.bounds is not None:
            # the padding tested around the clamped read (or a read padded along another dimension too), each
            # test a `map-seq-unswitch` may make once per iteration where it reads no variable bound within it
            padding = f"({first.condition}) && ({last.condition})"
            return GuardedAccess(lets=lets, condition=padding, inner=replace(inner, lets=()),
                                 default=gathered.read(), bounds=_identifiers(padding))
    rows = _rows(lanes)
    if rows is not None:
        # a grid clamped in several dimensions, the lanes along a row: one vector load where the row's
        # first and last lanes need no bringing back
        return GuardedAccess(lets=lets, condition=f"({first.row_inside}) && ({last.row_inside})",
                             inner=replace(rows, width=n), default=gathered.read(),
                             bounds=first.row_vars | last.row_vars, ranges=first.row_ranges + last.row_ranges)
    if all(isinstance(a, ClampedAccess) for a in lanes) and _adjacent([a.direct for a in lanes]):
        # a clamped (wrapped, mirrored) array: one vector load where the lanes need no bringing back
        vector = replace(first.direct, width=n)
        return GuardedAccess(lets=lets, condition=f"({first.inside}) && ({last.inside})", inner=vector,
                             default=gathered.read(), bounds=first.inside_vars | last.inside_vars,
                             ranges=first.inside_ranges + last.inside_ranges)
    return gathered


@dataclass(eq=False)
class AsScalarView(View):
    """`asScalar`: scalar `[..][i]` is lane `i mod n` of the input's vector `[..][i / n]`."""

    inner: View
    n: int
    type: Type

    def access(self, idx: tuple) -> Access:
        *outer, i = idx
        vec = self.inner.access(tuple(outer) + (i // self.n,))
        if isinstance(vec, GuardedAccess) and vec.drops:
            vec = vec.inner
        if isinstance(vec, MemAccess) and vec.width == self.n:
            return MemAccess(lets=vec.lets, mem=vec.mem, index=vec.index + i % self.n, width=1, field=vec.field,
                             field_vector=vec.field_vector)
        if isinstance(vec, GatherAccess) and (i % self.n).is_constant:
            return vec.parts[(i % self.n).value]
        raise LiftCodegenError("asScalar of vectors that are not in memory: store them first (toPrivate/toGlobal)")


def _adjacent(lanes: list) -> bool:
    """Whether the accesses read consecutive scalars of one memory, in order (one vector load reads them)."""
    first = lanes[0]
    return (isinstance(first, MemAccess) and not first.field
            and all(isinstance(a, MemAccess) and a.mem is first.mem and (a.index - first.index) == Cst(k)
                    for k, a in enumerate(lanes)))


def _identified(lanes: list) -> list:
    """The lanes with the variables their lets define by the same expression as the first lane's identified with
    the first lane's (each lane brings its indices back into range by variables of its own): the lanes along a row
    of a matrix whose rows are clamped (`pad-to-multiple(clamp)` of the rows: a padded block of rows) read one
    clamped row, as one vector."""
    if not lanes[0].lets or not all(isinstance(a, MemAccess) for a in lanes):
        return lanes
    return _first_lanes_lets(lanes, lanes)


def _first_lanes_lets(lanes: list, accesses: list) -> list:
    """Each of `accesses` (lane `i`'s) with the variables lane `i`'s lets define by the same expression as the
    first lane's replaced by the first lane's."""
    first = {text: var for var, text in lanes[0].lets}
    return [replace(x, index=x.index.substitute({var: first[text] for var, text in a.lets if text in first}))
            for a, x in zip(lanes, accesses)]


def _rows(lanes: list) -> Optional[MemAccess]:
    """The first lane's `row` access where the lanes (`ClampedAccess`es padded in several dimensions) read
    consecutive elements of one row: each lane brings its outer indices back into range by variables of its
    own, so the variables defined by the same expression are identified first."""
    if not all(isinstance(a, ClampedAccess) and a.row is not None for a in lanes):
        return None
    rows = _first_lanes_lets(lanes, [a.row for a in lanes])
    return rows[0] if _adjacent(rows) else None
