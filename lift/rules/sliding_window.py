"""Sliding windows in registers (Lift's `MapSeqSlide`, register rotation for stencils):

    map-seq(f) ∘ slide(size, step) → map-seq-slide(f, size, step)                    (step ≤ size)

Both sides apply `f` to the windows in order, in one work-item. The left one reads every window from the input,
each element `size / step` times; the right one keeps the window in `size` private variables and each step loads
only the `step` elements that enter it, then shifts the others down (`lift.opencl_gen.emit`'s
`call_MapSeqSlide`): a stencil walking down a column then reads each row once.
"""

from __future__ import annotations

from lift.ir.nodes import FunCall
from lift.ir.patterns import MapSeq, MapSeqSlide, Slide
from lift.rules.rule import requires, rule


def _slid(call) -> tuple:
    requires(type(call.f) is MapSeq, "the map-seq is unrolled, unswitched or not sequential")
    windows = call.args[0]
    requires(isinstance(windows, FunCall) and isinstance(windows.f, Slide), "its array is not a slide's windows")
    requires(windows.f.step <= windows.f.size, "the windows do not overlap or touch (step larger than size)")
    return (windows,)


@rule("map-seq-slide", figure="slide", heads=MapSeq, on_functions=False, match=_slid,
      description="a sequential map over a slide's windows keeping the window in private variables, "
                  "loading only the elements that enter it at each step",
      equation="map-seq(f) ∘ slide(size, step) → map-seq-slide(f, size, step)")
def map_seq_slide(call, windows):
    return MapSeqSlide(call.f.f, windows.f.size, windows.f.step)(*windows.args)


RULES = (map_seq_slide,)
