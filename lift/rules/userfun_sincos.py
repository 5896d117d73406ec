"""One call for the sine and cosine of one angle: `userfun-sincos` replaces a user function written in Python whose
body computes `sin(a)` and `cos(a)` of the same angle by the same function computing both by OpenCL's `sincos`
(`lift.ir.userfun_sincos`).

    u → u'      (u' = u with each sin(a) and cos(a) of one angle in a block computed by one sincos(a),
                 named u_sincos)

`u'` computes what `u` computes: `sincos(a, &c)` is `sin(a)`, and stores `cos(a)` in `c` (the module's equation);
both the C the generator prints and the numpy the interpreter runs are written from that body. A naive DFT's
`twiddle` (`x cos(a)`, `-x sin(a)`) took half the time on PoCL: the library reduces the angle's range and
evaluates both polynomials in one call.

The rule rewrites a call `u(..)` or `vectorize-n(u)(..)` (OpenCL's `sincos` takes vectors too), as
`userfun-loop-unroll` does.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Optional

from lift.ir.nodes import FunCall
from lift.ir.opencl_patterns import Vectorize
from lift.ir.userfun import UserFun
from lift.rules.rule import called_userfun, requires, rule, with_userfun


@lru_cache(maxsize=256)
def sincos_userfun(f: UserFun) -> Optional[UserFun]:
    """`f` with the sine and cosine of each angle computed by one call, named `<name>_sincos`; None where `f` is raw
    C, fused already, or computes no sine and cosine of one angle. Cached: the engine asks at every call of a user
    function."""
    if f.origin is None or f.origin.sincos:
        return None
    return f.reread("sincos", sincos=True)


def _fusable(call: FunCall) -> tuple:
    f = called_userfun(call)
    fused = sincos_userfun(f)
    requires(fused is not None, f"user function {f.name} computes no sine and cosine of one angle (or is written in "
                                f"C)")
    return (fused,)


@rule("userfun-sincos", figure="userfun", heads=(UserFun, Vectorize), on_functions=False, match=_fusable,
      description="a user function (or its vectorised version) computing the sine and cosine of one angle by one "
                  "call of sincos",
      equation="u → u'    (u' = u with sin(a) and cos(a) of one angle computed by one sincos(a); "
               "vectorize-n(u) → vectorize-n(u'))")
def userfun_sincos(call, fused: UserFun):
    return with_userfun(call, fused)


RULES = (userfun_sincos,)
