"""Where the values of the cost model's walk (`lift.explore.cost_walk.CostWalk`) are: a space (global, local,
private) with what the walk knows of a value held there, that decides what reading it costs (how often it is read
again, whether it is in memory or registers, which input array it is part of, how it is laid out)."""

from __future__ import annotations

from typing import Mapping, Optional

from lift.ir import patterns as P
from lift.ir.nodes import Expr, FunDecl, Literal, Param
from lift.ir.opencl_patterns import ReorderStride
from lift.opencl_gen.address_spaces import GLOBAL, PRIVATE
from lift.opencl_gen.destinations import is_layout
from lift.types.types import ArrayType, TupleType, Type


class Space(str):
    """A space (a `str`, equal to its name) with what the walk knows of a value held there: `varies`, the ids of the
    sequential loops it changes with (`lift.explore.cost_walk._Scope.reads`) and `ITEM` if it changes from one
    work-item to the next, `spilled`, for a private array that lives in memory (indexed by a loop counter, or as
    vectors of its scalars) instead of registers, and `gathered`, for an array read through a boundary (`pad`),
    whose neighbouring elements are not at neighbouring addresses (a compiler vectorises no loop over them),
    `array`, the program's input array it is part of (`KernelProfile.array_reads`), `windowed`, for an array read
    through overlapping windows (`slide`, `KernelProfile.array_windowed`), `stride`, for an array of scalars read
    through `reorder-stride-s` (its neighbouring elements `s` elements apart in memory) or a matrix of scalars in
    global memory read through `transpose` (a row's neighbouring elements a row of the matrix apart, unless its rows
    are overlapping windows), `walk`, the loop that takes those elements one after another (`KernelProfile.strided`),
    and `chain`, for a value computed from the accumulator of the innermost sequential reduction, the operations on
    the chain from that accumulator to it (`KernelProfile.chains`); `rows`, for a transposition of a matrix of rows in
    global memory (a matrix's column strips: `transpose(map(split-w)(B))`, a 2-D stencil's), how many levels below
    this array the elements that are a row of the matrix apart are (0: its own elements), and `row_walk`, the
    sequential loop that takes such elements one after another (`KernelProfile.row_walks`)."""

    def __new__(cls, space: str, varies: frozenset = frozenset(), spilled: bool = False, gathered: bool = False,
                array: Optional[str] = None, windowed: bool = False, stride: int = 0, walk: object = None,
                chain: Optional[float] = None, rows: Optional[int] = None, row_walk: object = None):
        new = super().__new__(cls, space)
        new.varies, new.spilled, new.gathered, new.array, new.windowed = varies, spilled, gathered, array, windowed
        new.stride, new.walk, new.chain, new.rows, new.row_walk = stride, walk, chain, rows, row_walk
        return new


_KNOWN = dict(varies=frozenset(), spilled=False, gathered=False, array=None, windowed=False, stride=0, walk=None,
              chain=None, rows=None, row_walk=None)


def with_changes(space: str, **changes) -> Space:
    """`space` with `changes` to what the walk knows of it (`Space`), the rest as it was."""
    return Space(space, **{name: changes.get(name, getattr(space, name, default)) for name, default in _KNOWN.items()})


def element_space(space, loop, rolled: bool, t: Type):
    """The space of an element (of type `t`) of an array in `space`, taken at each iteration of the loop `loop` (an
    id, `ITEM` for consecutive work-items, None for other parallel ones); a private array's elements taken by a
    rolled sequential loop are in memory; the loop that takes a strided array's scalars is its walk, and the sequential
    loop that takes elements a row of a matrix apart (`Space.rows`) its row walk."""
    if isinstance(space, tuple):
        return tuple(element_space(s, loop, rolled, t) for s in space)
    varies = getattr(space, "varies", frozenset())
    walk = loop if getattr(space, "stride", 0) and not holds_array(t) else getattr(space, "walk", None)
    rows, row_walk = getattr(space, "rows", None), getattr(space, "row_walk", None)
    if rows == 0:
        rows, row_walk = None, loop if isinstance(loop, int) else row_walk
    elif rows is not None:
        rows -= 1
    return with_changes(space, varies=varies | {loop} if loop is not None else varies, walk=walk, rows=rows,
                        row_walk=row_walk, spilled=getattr(space, "spilled", False) or (rolled and space == PRIVATE))


def spilled_space(space):
    """`space`, a private one marked as in memory (a vector view of private scalars)."""
    if isinstance(space, tuple):
        return tuple(spilled_space(s) for s in space)
    return with_changes(space, spilled=True) if space == PRIVATE else space


def view_space(f: FunDecl, space, t: Type):
    """The space of a view `f` (a layout pattern of one argument, of type `t`) of a value in `space`: marked as read
    through a boundary (`pad`, `Space.gathered`), through overlapping windows (`slide` with a step below its size,
    `Space.windowed`) or with a stride (`reorder-stride` of an array of scalars, `Space.stride`); a split of a
    transposition of a matrix of rows (a work-group's tile of a product's column strips) puts its rows a level further
    down (`Space.rows`)."""
    if isinstance(space, tuple):
        return tuple(view_space(f, s, t) for s in space)
    if isinstance(f, P.Pad):
        return with_changes(space, gathered=True)
    if isinstance(f, P.Slide) and f.step < f.size:
        return with_changes(space, windowed=True)
    if isinstance(f, ReorderStride) and isinstance(t, ArrayType) and not holds_array(t.elem):
        return with_changes(space, stride=f.s.value)
    if (isinstance(f, P.Transpose) and space == GLOBAL and not getattr(space, "windowed", False)
            and isinstance(t, ArrayType) and isinstance(t.elem, ArrayType) and not holds_array(t.elem.elem)
            and t.elem.length.is_constant):
        return with_changes(space, stride=t.elem.length.value)
    if (isinstance(f, P.Transpose) and space == GLOBAL and isinstance(t, ArrayType) and isinstance(t.elem, ArrayType)
            and holds_array(t.elem.elem)):
        return with_changes(space, rows=1)
    if isinstance(f, P.Split) and getattr(space, "rows", None) is not None:
        return with_changes(space, rows=space.rows + 1)
    return space


def holds_array(t: Type) -> bool:
    """Whether a value of type `t` is or holds an array."""
    return isinstance(t, ArrayType) or isinstance(t, TupleType) and any(holds_array(c) for c in t.elems)


def gathers(space) -> bool:
    """Whether `space` (or a component of it) is read through a boundary."""
    if isinstance(space, tuple):
        return any(gathers(s) for s in space)
    return getattr(space, "gathered", False)


def top_level_space(e: Expr, params: Mapping) -> object:
    """The space of a kernel's argument: a program parameter's, a view of it, or global (another kernel's
    result)."""
    if isinstance(e, Param):
        return params.get(e.name, GLOBAL)
    if isinstance(e, Literal):
        return PRIVATE
    if not is_layout(e):
        return GLOBAL
    spaces = [top_level_space(a, params) for a in e.args]
    if isinstance(e.f, (P.Zip, P.Tuple)):
        return tuple(spaces)
    if isinstance(e.f, P.Get) and isinstance(spaces[0], tuple):
        return spaces[0][e.f.i]
    return view_space(e.f, spaces[0], e.args[0].t)
