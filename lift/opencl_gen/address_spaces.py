"""Address spaces: where a result is stored when the expression does not say, and where a view's values live.

The rules choose memory explicitly with `toGlobal`, `toLocal` and `toPrivate` (paper 4.2, rule 4(c)); a
result with no cast follows one fixed rule, `default_space`, that the emitter and the cost model share:
inside a work-item (a `map-local`, `map-global` or sequential pattern, or a kernel that runs in one
work-item) it is private, else global (a `map-workgroup`'s result is shared by its work-items, a
top-level result by the kernels after it). The rule is a convention of the memory model, not an
optimisation: a rule that wants another space says so with a cast.
"""

from __future__ import annotations

from lift.opencl_gen import views as V

GLOBAL, LOCAL, PRIVATE = "global", "local", "private"
THREADED = ("lcl", "glb", "seq", "reduce", "seq-kernel")


def default_space(kinds) -> str:
    """The space of an uncast result inside loops of these kinds (`wrg`, `lcl`, `glb`, `seq`, `reduce`,
    `seq-kernel`, outermost first)."""
    return PRIVATE if any(k in THREADED for k in kinds) else GLOBAL


def space_of(view: V.View) -> str:
    """The address space of the memory under `view` (private for values and mixed tuples)."""
    if isinstance(view, V.TupleView):
        spaces = {space_of(p) for p in view.parts if p is not None}
        return spaces.pop() if len(spaces) == 1 else PRIVATE
    while not isinstance(view, V.MemView):
        view = getattr(view, "inner", None) or getattr(view, "parent", None)
        if view is None:
            return PRIVATE
    return view.mem.space
