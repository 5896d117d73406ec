"""Composing user functions: `userfun-composition` replaces a user function applied to another's result by their
composition, one user function (`lift.ir.userfun_composition`).

    f(x₀, .., g(y₀, .., yₖ), ..) → (f ∘ᵢ g)(x₀, .., y₀, .., yₖ, ..)
    vectorize-n(f)(.., vectorize-n(g)(y₀, .., yₖ), ..) → vectorize-n(f ∘ᵢ g)(.., y₀, .., yₖ, ..)

Both sides compute `f` of `g`'s result (the composition's equation); `g` called on one tuple spread over its
parameters passes the tuple's components (`get-j`). Why: a fold's step `add(acc, mult(x, w))` becomes one
expression, `acc + x * w`, which the OpenCL compiler contracts into a fused multiply-add (`FP_CONTRACT`, on by
default; `lift explore --fp-contract off` forbids it): one instruction a step instead of two. The 2-D 9-point
weighted Jacobi (`stencils.py`'s jacobi2d_high) at 2048² on PoCL (Xeon, AVX-512, 2 shared cores, load 6-10,
interleaved): row blocks of 4x256 in float8s or float16s at 0.85-0.90 of the streaming copy's median time,
0.93-0.95 composed. The default lowering and the search compose only a fold's multiply-adds (`multiply_add`):
a composition that contracts nothing (asum's `add(acc, absf(x))`) would change no instruction.
"""

from __future__ import annotations

from typing import Optional

from lift.ir.nodes import FunCall
from lift.ir.opencl_patterns import Vectorize
from lift.ir.patterns import Get
from lift.ir.userfun import UserFun
from lift.ir.userfun_composition import composed, contracts
from lift.rules.rule import RuleNotApplicable, called_userfun, requires, rule


def _applied(e, lanes):
    """The user function a call `e` applies, on `lanes` lanes (None: not vectorised), or None."""
    if not isinstance(e, FunCall):
        return None
    if lanes is None:
        return e.f if isinstance(e.f, UserFun) else None
    return e.f.f if isinstance(e.f, Vectorize) and e.f.n == lanes and isinstance(e.f.f, UserFun) else None


def composes(call: FunCall) -> Optional[tuple]:
    """`(h, i, args, g)`: the composition `h` of the user function `call` applies with the first user function `g`
    applied to its argument `i` that it composes with, and `g`'s arguments; None where there is none."""
    f = called_userfun(call)
    lanes = call.f.n if isinstance(call.f, Vectorize) else None
    if len(call.args) != f.arity:
        return None
    for i, arg in enumerate(call.args):
        g = _applied(arg, lanes)
        h = g and composed(f, i, g)
        if h is not None:
            args = arg.args if len(arg.args) == g.arity else tuple(Get(arg.args[0], j) for j in range(g.arity))
            return h, i, args, g
    return None


def multiply_add(ctx) -> bool:
    """At a call of a user function whose composition (`composes`) is a multiply-add
    (`lift.ir.userfun_composition.contracts`): `add(acc, mult(x, w))`."""
    if not isinstance(ctx.node, FunCall) or not isinstance(ctx.node.f, (UserFun, Vectorize)):
        return False
    try:
        found = composes(ctx.node)
    except RuleNotApplicable:
        return False
    return found is not None and contracts(called_userfun(ctx.node), found[1], found[3])


def _composable(call: FunCall) -> tuple:
    found = composes(call)
    requires(found is not None, f"user function {called_userfun(call).name} applies no user function it composes "
                                f"with (written in Python, `return e` alone, its result read once outside every loop)")
    return found[:3]


@rule("userfun-composition", figure="userfun", heads=(UserFun, Vectorize), on_functions=False, match=_composable,
      description="a user function (or its vectorised version) applied to another's result replaced by their "
                  "composition, one expression the OpenCL compiler may contract (a multiply-add)",
      equation="f(.., g(y₀, .., yₖ), ..) → (f ∘ g)(.., y₀, .., yₖ, ..); the same under vectorize-n")
def userfun_composition(call, h: UserFun, i: int, args: tuple):
    fun = Vectorize(call.f.n, h) if isinstance(call.f, Vectorize) else h
    return FunCall(fun, call.args[:i] + tuple(args) + call.args[i + 1:])


RULES = (userfun_composition,)
