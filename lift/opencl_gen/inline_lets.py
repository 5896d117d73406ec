"""Pass `inline-lets`: lambdas applied outside every map are β-reduced.

A top-level `(λt. ... t ... t ...)(x)` then means what writing `x` twice means: the kernel planning
(`lift.opencl_gen.destinations`) computes a top-level computation once however often it occurs. A
lambda whose parameters are also used inside some function (inside a kernel) stays: its arguments are
computed first and passed in memory.
"""

from __future__ import annotations

from lift.ir.nodes import Expr, FunCall, Lambda, count_uses, substitute, top_level_uses


def inline_lets(e: Expr) -> Expr:
    """`e` with each lambda applied outside every map replaced by its body on the arguments (β-reduction);
    `e` itself where there is none."""
    if not isinstance(e, FunCall):
        return e
    args = tuple(inline_lets(a) for a in e.args)
    f = e.f
    if (isinstance(f, Lambda) and len(args) == len(f.params)
            and all(count_uses(f.body, p) == top_level_uses(f.body, p) for p in f.params)):
        return inline_lets(substitute(f.body, dict(zip(f.params, args))))
    if all(a is b for a, b in zip(args, e.args)):
        return e
    return FunCall(f, args)

