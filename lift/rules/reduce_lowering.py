"""Lowering reductions (Figure 4(b)): the only reduction the code generator knows is sequential.

    reduce(f, z) → reduce-seq(f, z)

Parallel reductions are compositions of algorithmic patterns (Figure 3(d)), so the code generator
only implements the sequential fold. Its operator runs in one thread: nothing parallel may be inside.
The fold combines the elements in order, where `reduce` leaves the order to the implementation.
"""

from __future__ import annotations

from lift.ir.patterns import Reduce, ReduceSeq
from lift.rules.hierarchy import is_sequential_safe
from lift.rules.rule import requires, rule


@rule("reduce-to-seq", figure="4(b)", description="the reduction runs as a sequential fold",
      equation="reduce(f, z) → reduce-seq(f, z)", heads=Reduce, reassociates=True,
      allowed=lambda call, ctx: requires(is_sequential_safe(call.f.f), "the operator has parallel maps inside"))
def reduce_to_seq(call):
    return ReduceSeq(call.f.f, call.f.init)(*call.args)


RULES = (reduce_to_seq,)
