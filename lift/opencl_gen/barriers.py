"""Pass `place-barriers`: where the work-items of a work-group wait for each other (OpenCL's `barrier`).

Work-items share memory only within a work-group, so a barrier is needed where the work-items of a
`map-workgroup` hand values to each other, at the work-group's own level (not inside a work-item's code):

- after a `map-local` whose result goes to new memory (its own, or a `toLocal`/`toGlobal` one), since
  the next step reads elements other work-items wrote;
- after each step of an `iterate` at work-group level, before the two buffers swap;
- at the end of each step of a sequential loop at work-group level (a `reduce-seq` whose operator has
  `map-local`s inside: CASES 2016's tiles of the reduction dimension staged in local memory) whose step
  waits itself: the next step's copy into the tile must not overwrite elements other work-items still
  read (a write-after-read hazard across steps).

A `map-local` writing into a destination given from outside (the kernel's output) needs none: nothing in
the work-group reads it again, and the end of a kernel orders its writes before the next kernel's reads.
So the Figure 9(a) asum (`asum_nvidia` in `examples/asum.py`) waits 1 + 7 times per work-group, not
1 + 7 + 1: after the `toLocal(map-local(...))` that fills the tree's first level, and after each of the
`iterate-7` steps; its last step, `toGlobal(map-local(map-seq(id)))`, writes the partial sums straight
into the kernel's output (through `join ∘ split-1`), which only the next kernel reads (Lift's Scala
generator, which puts a barrier after every `map-local`, has one more, redundant). The fence covers local
memory, and global memory too where the result is global. This is what the memory model requires for the
code to be correct, not a choice: a rule that wants fewer barriers changes the expression (e.g. keeps
results private).

The emitter states the facts on its loops (`kind`, and `fresh`: the space of new memory the loop's
work-items fill for each other, `lift.opencl_gen.c_ast.For`); `place_barriers` reads them off each
kernel's body and inserts the barriers.
"""

from __future__ import annotations

from dataclasses import replace

from lift.opencl_gen import c_ast as C
from lift.opencl_gen.address_spaces import GLOBAL, LOCAL


def at_workgroup_level(kinds) -> bool:
    """Whether code inside loops of these kinds runs once per work-group, in all its work-items together: inside a
    `map-workgroup` and no `map-local` (a sequential loop there is run by every work-item of the group alike)."""
    return "wrg" in kinds and "lcl" not in kinds


def barrier(space: str) -> C.Barrier:
    """The barrier after writing memory in `space`."""
    return C.Barrier("CLK_LOCAL_MEM_FENCE" if space == LOCAL else "CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE")


def place_barriers(body: tuple, kinds: tuple = ()) -> tuple:
    """`body` with a barrier after each `map-local` loop that fills fresh memory at work-group level, before the
    swap that ends each step of an `iterate` at work-group level, and at the end of each step of a sequential
    loop at work-group level that has a barrier inside (where the step does not end with one)."""
    out = []
    for s in body:
        if not isinstance(s, (C.For, C.Block)):
            out.append(s)
            continue
        inner = place_barriers(s.body, kinds + ((s.kind,) if s.kind else ()))
        if s.kind == "iterate" and at_workgroup_level(kinds):
            swap = next(i for i, t in enumerate(inner) if isinstance(t, C.Swap))
            inner = inner[:swap] + (barrier(s.fresh),) + inner[swap:]
        elif s.kind == "seq" and at_workgroup_level(kinds) and inner and not isinstance(inner[-1], C.Barrier):
            fences = {b.fence for b in _barriers(inner)}
            if fences:
                inner += (barrier(LOCAL) if fences == {barrier(LOCAL).fence} else barrier(GLOBAL),)
        out.append(replace(s, body=inner))
        if s.kind == "lcl" and s.fresh is not None and at_workgroup_level(kinds):
            out.append(barrier(s.fresh))
    return tuple(out)


def _barriers(body: tuple) -> list:
    """The barriers in `body`, at any depth."""
    return [b for s in body for b in ((s,) if isinstance(s, C.Barrier) else
                                      _barriers(s.body) if isinstance(s, (C.For, C.Block)) else ())]
