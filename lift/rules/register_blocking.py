"""Register blocking: a work-item computes a block of results, its accumulators in private memory.

    reduce-seq(f, z) → copy ∘ toPrivate(reduce-seq(f, copy(z)))    (an array accumulator, in a work-item;
                                                                   copy = map-seq(..(map-seq(id))))

The fold's array accumulator (built by `map-reduce-interchange`, Figure 3(d): the `w` column reductions of
a block as one fold over rows into `w` accumulators) otherwise lives where the fold's result goes, usually
global memory, read and written at every step. Stored in the work-item's private memory (Figure 4(d)'s
`toPrivate`, for constant lengths) the accumulators are registers: the initial value is copied in (`map-seq(id)`
at each level, as the `copy` rule of `lift.rules.memory` writes it; Lift writes the same
`toPrivate(map-seq(map-seq(id)))(z)`), and the block copied out once at the end: the same value. The copies
are maps, so that `map-seq-unroll` (`lift.rules.unrolling`) may unroll them like the update.
This is the register blocking of Steuwer, Remmelg, Dubach (CASES 2016): work per thread in one
dimension.
The macro rules composing it with tiling and interchange are in `lift.rules.macro_rules`.
"""

from __future__ import annotations

from lift.ir.opencl_patterns import ToPrivate
from lift.ir.patterns import MapGlb, MapLcl, ReduceSeq
from lift.rules.memory import identity_copy
from lift.rules.rule import requires, rule
from lift.rules.sizes import integer
from lift.types.types import ArrayType, ScalarType, VectorType


def _array_accumulator(call) -> None:
    t = call.f.init.t
    requires(isinstance(t, ArrayType), "the accumulator is not an array")
    while isinstance(t, ArrayType):
        requires(integer(t.length) is not None, "private arrays need a constant length")
        t = t.elem
    requires(isinstance(t, (ScalarType, VectorType)), "the accumulator is not an array of scalars or vectors")


def _in_a_work_item(call, ctx) -> None:
    requires(any(isinstance(p, (MapLcl, MapGlb)) for p in ctx.enclosing()), "not inside a work-item")
    requires(not any(isinstance(p, ToPrivate) for p in ctx.enclosing()) and
             not (ctx.is_function and isinstance(ctx.parent.node, ToPrivate)), "the result is already private")


@rule("private-accumulator", figure="4(d)", heads=ReduceSeq, on_functions=False, sized=True,
      match=_array_accumulator, allowed=_in_a_work_item,
      description="a work-item's array accumulator lives in private memory, copied in and out once",
      equation="reduce-seq(f, z) → copy ∘ toPrivate(reduce-seq(f, copy(z))), copy = map-seq(..(map-seq(id)))")
def private_accumulator(call):
    fold = call.f
    init = ReduceSeq(fold.f, identity_copy(fold.init.t)(fold.init))
    return identity_copy(call.t)(ToPrivate(init)(*call.args))


RULES = (private_accumulator,)
