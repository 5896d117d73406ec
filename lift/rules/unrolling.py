"""Unrolling: a sequential map or fold of constant length as straight-line code (Lift's `MapSeqUnroll`), and
unswitching: a sequential map's iterations tested once for the edges of the arrays they read.

    map-seq(f) → map-seq-unroll(f)                                        (the length a constant)
    reduce-seq(f, z) → reduce-seq-unroll(f, z)                            (the length a constant)
    map-seq(f) → map-seq-unswitch(f, rolled)

Each pair means the same (Table 2): the iterations, in order, in one work-item. Unrolled, every index into the
array is a constant, which is what lets an OpenCL compiler keep a private array in registers (indexed by a
loop counter it lives in memory, read and written at every step): the accumulators of a register block
(`lift.rules.register_blocking`) stay registers only when the loops over them are unrolled. A fold over a
stencil's window reads it through views: unrolled, the division and remainder of a flattened window (`join`)
and the bounds checks of a padded grid become constants at each step. Unswitched, an iteration whose vector
reads of a clamped grid are all in bounds (everywhere but at the grid's edges) reads them without a check each;
the other iterations check each read, their unrolled maps and folds unrolled too or, `rolled`, loops: a kernel of
a fraction of the size, which builds faster, and runs slower where many iterations are at the edges.
"""

from __future__ import annotations

from lift.ir.patterns import MapSeq, MapSeqUnroll, MapSeqUnswitch, ReduceSeq, ReduceSeqUnroll
from lift.rules.rule import requires, rule
from lift.rules.sizes import integer


def _constant_length(pattern: type):
    """Matches a plain `pattern` (not yet unrolled) over an array of constant length."""
    def match(call) -> None:
        requires(type(call.f) is pattern, f"the {pattern.paper} is already unrolled")
        requires(integer(call.args[0].t.length) is not None, "the length is not a constant")
    return match


@rule("map-seq-unroll", figure="CASES16", heads=MapSeq, sized=True, match=_constant_length(MapSeq),
      description="a sequential map of constant length unrolled, so that its indices are constants",
      equation="map-seq(f) → map-seq-unroll(f)")
def map_seq_unroll(call):
    return MapSeqUnroll(call.f.f)(*call.args)


@rule("reduce-seq-unroll", figure="CASES16", heads=ReduceSeq, sized=True, match=_constant_length(ReduceSeq),
      description="a sequential reduction of constant length unrolled, so that its indices are constants",
      equation="reduce-seq(f, z) → reduce-seq-unroll(f, z)")
def reduce_seq_unroll(call):
    return ReduceSeqUnroll(call.f.f, call.f.init)(*call.args)


def _unswitch_choices(call, ctx) -> list:
    requires(type(call.f) is MapSeq, "the map-seq is already unrolled or unswitched")
    return [{"rolled": False}, {"rolled": True}]


@rule("map-seq-unswitch", figure="unswitch", heads=MapSeq, on_functions=False, choices=_unswitch_choices,
      description="a sequential map whose iterations test the bounds of their clamped vector reads once each, "
                  "the copy that checks each read (at the edges) unrolled or rolled (its unrolled loops as loops)",
      equation="map-seq(f) → map-seq-unswitch(f, rolled)")
def map_seq_unswitch(call, rolled: bool):
    requires(isinstance(rolled, bool), f"rolled is True or False, got {rolled!r}")
    return MapSeqUnswitch(call.f.f, rolled)(*call.args)


RULES = (map_seq_unroll, reduce_seq_unroll, map_seq_unswitch)
