"""Barrier placement: where the work-items of a work-group wait for each other (OpenCL's `barrier`).

Work-items share memory only within a work-group, so a barrier is needed where the work-items of a
`map-workgroup` hand values to each other, at the work-group's own level (not inside a work-item's code):

- after a `map-local` whose result goes to new memory (its own, or a `toLocal`/`toGlobal` one), since
  the next step reads elements other work-items wrote;
- after each step of an `iterate` at work-group level, before the two buffers swap.

A `map-local` writing into a destination given from outside (the kernel's output) needs none: nothing in
the work-group reads it again. The fence covers local memory, and global memory too where the result is
global. This is what the memory model requires for the code to be correct, not a choice: a rule that
wants fewer barriers changes the expression (e.g. keeps results private).
"""

from __future__ import annotations

from lift.opencl_gen import c_ast as C
from lift.opencl_gen.address_spaces import LOCAL

_WORK_ITEM = ("lcl", "seq", "reduce")


def at_workgroup_level(kinds) -> bool:
    """Whether code inside loops of these kinds runs once per work-group, in all its work-items together."""
    return "wrg" in kinds and not any(k in _WORK_ITEM for k in kinds)


def barrier(space: str) -> C.Barrier:
    """The barrier after writing memory in `space`."""
    return C.Barrier("CLK_LOCAL_MEM_FENCE" if space == LOCAL else "CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE")
