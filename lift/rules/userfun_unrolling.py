"""Unrolling the loops inside a user function: `userfun-loop-unroll` replaces a user function written in Python by
the same function with its loops of constant trip count unrolled (`lift.ir.userfun_unrolling`).

    u → u'      (u' = u with every loop of constant trip count whose copies fit `MAX_UNROLLED_STATEMENTS`
                 statements unrolled, named u_unrolled)

`u'` computes what `u` computes: its body is `u`'s with each such loop replaced by its iterations in order, the
loop variable a constant in each (the module's equation); both the C the generator prints and the numpy the
interpreter runs are written from that body. It is `lift.rules.unrolling`'s `map-seq-unroll` for the loops a
user writes in Python rather than as patterns, and for the same reason: a window `w` read as `w[i][j]` inside
`for i in range(3): for j in range(3)` is read at constant indices once unrolled, so an OpenCL compiler keeps
the private copy of the window (`private-argument`) in registers instead of memory, and the loops' control is
gone. Game of Life's 3x3 rule at 1001x999 on PoCL (2 shared cores, best of 7 interleaved): 17.6 ms rolled, 12.5 ms
unrolled (48.6 and 25.6 ms at a load of 6.5), as fast as the rule written out by hand; PoCL's machine code of the rolled kernel stores and loads
the window through the stack, the unrolled one keeps it in registers.

The rule rewrites a call `u(..)` (a map of a user function of arrays calls it on a named element after
`map-eta-expansion`, as the default lowering writes it), or `vectorize-n(u)(..)` (a stencil's windows in the lanes
of vectors): a function passed to a pattern point-free may sit in `vect-n(u)`, where the engine knows no argument
types to apply it to, and keeps its loops.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Optional

from lift.ir.nodes import FunCall
from lift.ir.opencl_patterns import Vectorize
from lift.ir.userfun import UserFun
from lift.rules.rule import called_userfun, requires, rule, with_userfun

MAX_UNROLLED_STATEMENTS = 64
"""The most statements a loop's copies may come to (a 5x5 window's loop of two statements: 50); a longer loop
(Mandelbrot's 64 steps of 6 statements) stays a loop: its code would grow more than its control costs."""


@lru_cache(maxsize=256)
def unrolled_userfun(f: UserFun, limit: int = MAX_UNROLLED_STATEMENTS) -> Optional[UserFun]:
    """`f` with its loops that fit `limit` unrolled, named `<name>_unrolled`; None where `f` is raw C, or has no
    such loop. Cached: the engine asks at every call of a user function, and typing a body takes a while."""
    if f.origin is None or f.origin.unroll:
        return None
    return f.reread("unrolled", unroll=limit)


def _unrollable(call: FunCall) -> tuple:
    f = called_userfun(call)
    unrolled = unrolled_userfun(f)
    requires(unrolled is not None, f"user function {f.name} has no loop of constant trip count of at most "
                                   f"{MAX_UNROLLED_STATEMENTS} statements unrolled (or is written in C)")
    return (unrolled,)


@rule("userfun-loop-unroll", figure="userfun", heads=(UserFun, Vectorize), on_functions=False, match=_unrollable,
      description="a user function (or its vectorised version) whose loops of constant trip count are unrolled, so "
                  "that the arrays it reads are indexed by constants",
      equation="u → u'    (u' = u with its loops of constant trip count, up to 64 statements, unrolled; "
               "vectorize-n(u) → vectorize-n(u'))")
def userfun_loop_unroll(call, unrolled: UserFun):
    return with_userfun(call, unrolled)


RULES = (userfun_loop_unroll,)
