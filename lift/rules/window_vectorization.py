"""Vectorising a map over windows across the windows: lane `j` of every vector computes window `j`.

    map(f)(X) → asScalar ∘ map(vect-n(f)) ∘ packed-n(X)                            (vectorize-windows, 4(e))
    packed-n(X) = transpose ∘ map(asVector-n) ∘ transpose(X)                      (windows of rank 1)
    packed-n(X) = transpose ∘ map(λr. packed-n(r)) ∘ transpose(X)                 (windows of higher rank)

`X` is an array of `w` windows (arrays of scalars, of any rank) and `f` gives a scalar (or an array of them,
such as a reduction's `[1]`: its lanes then taken out of the vectors as `packed-n` puts them in). `packed-n` regroups
`X` as `w/n` windows of `n`-lane vectors: element `i` of vector-window `p` holds, in lane `j`, element `i` of
window `n*p + j` (each `transpose` brings the window dimension one level in, `asVector-n` makes it the lanes,
the outer `transpose` takes the other levels out again). `vect-n(f)`, pushed through `f`'s maps, reductions
and views (`lift.rules.vectorize_function`, with arrays), computes `f` of each lane's window in that lane, so
`asScalar` gives back `f` of every window in order: Figure 4(e)'s `map(f) → asScalar ∘ map(vect-n(f)) ∘
asVector-n` with windows for elements.

On a stencil `map(f)(slide(s, 1)(x))`, row `i` of `transpose(X)` is `x` shifted by `i`, so each vector of a
window is `n` consecutive grid values read at once (an unaligned vector load), and a reduction over the window
accumulates in one vector: a work-item computes `n` outputs with the loads and arithmetic of one.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Optional

from lift.ir.nodes import Lambda, fresh_param
from lift.ir.opencl_patterns import AsScalar, AsVector
from lift.ir.patterns import AbstractMap, Map, Transpose
from lift.rules.rule import requires, rule
from lift.rules.sizes import integer
from lift.rules.vectorize_function import NotVectorisable, vectorize
from lift.types.types import VECTOR_WIDTHS, ArrayType, ScalarType


def window_rank(t) -> Optional[int]:
    """The number of array dimensions of `t` above its scalars (0 for a scalar); None where `t` is no array of
    scalars."""
    rank = 0
    while isinstance(t, ArrayType):
        t, rank = t.elem, rank + 1
    return rank if isinstance(t, ScalarType) else None


def _windows(call, ctx) -> None:
    requires(len(call.args) == 1, "the map is not applied to one array")
    requires((window_rank(call.args[0].t.elem) or 0) > 0,
             f"the elements are {call.args[0].t.elem}, not arrays of scalars")
    requires(window_rank(call.t.elem) is not None, f"the map gives {call.t.elem}, not scalars or arrays of them")
    try:
        vectorize(VECTOR_WIDTHS[0], call.f.f, arrays=True)
    except NotVectorisable as e:
        requires(False, str(e))


def across(view, rank: int, x):
    """`view` (`asVector-n` or `asScalar`) applied across the outer dimension of `x`, an array of arrays of `rank`
    dimensions: the outer dimension taken innermost by transpositions, viewed, and taken out again."""
    if rank == 1:
        inner = Map(view)
    else:
        r = fresh_param("r")
        inner = Map(Lambda((r,), across(view, rank - 1, r)))
    return Transpose()(inner(Transpose()(x)))


@rule("vectorize-windows", figure="4(e)", heads=AbstractMap, on_functions=False, param="n", allowed=_windows,
      fits=lambda call, n: n in VECTOR_WIDTHS,
      description="a map over windows becomes a map of its n-lane version over windows of vectors, lane j of "
                  "each computing window j",
      equation="map(f)(X) → asScalar ∘ map(vect-n(f)) ∘ transpose ∘ map(asVector-n) ∘ transpose(X)")
def vectorize_windows(call, n):
    n = integer(n)
    x = call.args[0]
    lanes = replace(call.f, f=vectorize(n, call.f.f, arrays=True))(across(AsVector(n), window_rank(x.t.elem), x))
    results = window_rank(call.t.elem)
    return across(AsScalar(), results, lanes) if results else AsScalar()(lanes)


RULES = (vectorize_windows,)
