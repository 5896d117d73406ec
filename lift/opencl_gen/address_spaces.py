"""Address spaces: OpenCL's names for them, and where a view's values live.

Where a result is stored is always written in the expression, as a cast (`toGlobal`, `toLocal`,
`toPrivate`): by the rules, or by the pass `infer-address-spaces` for a result they leave uncast
(`lift.opencl_gen.space_inference`).
"""

from __future__ import annotations

from lift.opencl_gen import views as V

GLOBAL, LOCAL, PRIVATE = "global", "local", "private"


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
