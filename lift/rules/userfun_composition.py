"""Composing user functions: `userfun-composition` replaces a user function applied to another's result by their
composition, one user function (`lift.ir.userfun_composition`).

    f(x₀, .., g(y₀, .., yₖ), ..) → (f ∘ᵢ g)(x₀, .., y₀, .., yₖ, ..)
    vectorize-n(f)(.., vectorize-n(g)(y₀, .., yₖ), ..) → vectorize-n(f ∘ᵢ g)(.., y₀, .., yₖ, ..)

Both sides compute `f` of `g`'s result (the composition's equation); `g` called on one tuple spread over its
parameters passes the tuple's components (`get-j`). Why: a fold's step `add(acc, mult(x, w))` becomes one
expression, `acc + x * w`, which the OpenCL compiler contracts into a fused multiply-add (`FP_CONTRACT`, on by
default; `lift explore --fp-contract off` forbids it): one instruction a step instead of two. The 2-D 9-point
weighted Jacobi (`stencils.py`'s jacobi2d_high) at 2048² on PoCL (Xeon, AVX-512, load 6-7): rows blocks of
4x256 in float8s 0.85-0.88 of the streaming copy (medians), 0.93-0.95 composed.
"""

from __future__ import annotations

from lift.ir.nodes import FunCall
from lift.ir.patterns import Get, Vectorize
from lift.ir.userfun import UserFun
from lift.ir.userfun_composition import composed
from lift.rules.rule import called_userfun, requires, rule


def _applied(e, lanes):
    """The user function a call `e` applies, on `lanes` lanes (None: not vectorised), or None."""
    if not isinstance(e, FunCall):
        return None
    if lanes is None:
        return e.f if isinstance(e.f, UserFun) else None
    return e.f.f if isinstance(e.f, Vectorize) and e.f.n == lanes and isinstance(e.f.f, UserFun) else None


def _composable(call: FunCall) -> tuple:
    f = called_userfun(call)
    lanes = call.f.n if isinstance(call.f, Vectorize) else None
    requires(len(call.args) == f.arity, f"user function {f.name} takes a tuple spread over its parameters")
    for i, arg in enumerate(call.args):
        g = _applied(arg, lanes)
        h = g and composed(f, i, g)
        if h is not None:
            args = arg.args if len(arg.args) == g.arity else tuple(Get(arg.args[0], j) for j in range(g.arity))
            return (h, i, args)
    requires(False, f"user function {f.name} applies no user function it composes with (a single `return e` "
                    f"written in Python, read once outside every loop)")


@rule("userfun-composition", figure="userfun", heads=(UserFun, Vectorize), on_functions=False, match=_composable,
      description="a user function (or its vectorised version) applied to another's result replaced by their "
                  "composition, one expression the OpenCL compiler may contract (a multiply-add)",
      equation="f(.., g(y₀, .., yₖ), ..) → (f ∘ g)(.., y₀, .., yₖ, ..); the same under vectorize-n")
def userfun_composition(call, h: UserFun, i: int, args: tuple):
    fun = Vectorize(call.f.n, h) if isinstance(call.f, Vectorize) else h
    return FunCall(fun, call.args[:i] + tuple(args) + call.args[i + 1:])


RULES = (userfun_composition,)
