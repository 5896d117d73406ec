"""Routine inlining: a call of a routine (the kernel-fusion paper's library call, `lift.ir.routine`) is its body.

    r(a1, ..., an) → B[p1 := a1, ..., pn := an]        (r = λp1 ... pn. B)        (inline-routine)

This is β-reduction, so it holds for every call. A program written as calls keeps them for the fusion
search (`lift explore` partitions the calls into kernels); the other rules, the default lowering and the
code generator see patterns only, so the default lowering inlines every call first. A routine passed to a
pattern (`map(dot)`) becomes its lambda, as the engine abstracts the argument it called it with.
"""

from __future__ import annotations

from lift.ir.nodes import Expr, FunCall
from lift.ir.routine import Routine, inline_routines
from lift.rules.rule import rule


@rule("inline-routine", figure="KF 4.2", heads=Routine,
      description="a routine call is the routine's body with its parameters bound to the arguments (beta reduction)",
      equation="r(a1, ..., an) → B[p1 := a1, ..., pn := an]    (r = λp1 ... pn. B)")
def inline_routine(call: FunCall) -> Expr:
    return inline_routines(call, only=(call.f,))


RULES = (inline_routine,)
