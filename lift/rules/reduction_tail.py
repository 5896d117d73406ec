"""A reduction split into a head of a multiple of `k` elements and a short tail: `reduce-tail`.

    reduce(f, z)(x) → join(map(λs. reduce(f, s)(drop-h(x)))(reduce(f, z)(take-h(x))))       h = k·⌊n/k⌋
    reduce(f, z)(map(g)(x)) → join(map(λs. reduce(f, s)(map(g)(drop-h(x))))(reduce(f, z)(map(g)(take-h(x)))))

for `x` of `n` elements (a zip's arrays each taken and dropped). A reduction is a fold of its elements (in any
order for the associative, commutative `f` that `reduce` requires; from the left where `f` is not known to be,
`reduce` then meaning `reduce-seq`), and a fold of `x = take-h(x) ++ drop-h(x)` from `z` is the fold of the tail
from the fold of the head, `reduce(f, z)(a ++ b) = reduce(f, reduce(f, z)(a))(b)`: the map over the head's
one-element result binds it as the tail's initial value `s` (the IR's own means, as in
`lift.rules.scalar_argument`), and `join` takes the tail's one result out of the array of one around it. Any `z`
and `f` qualify: `z` is reduced once, where padding reduces it once per padded element (`lift.rules.padding`).
`take-h ∘ map(g) = map(g) ∘ take-h` (a view commutes with a map), so the map reads its input's views.

The head's length is a multiple of `k`, which `k`-lane vectors divide (`vectorize-map`, `reduce-lanes`), with no
padding: a reduction of a map that sends no padding value to the neutral element (a row's `exp(x - s)`, 0 for
no finite `x`) vectorises its head, and its tail of fewer than `k` elements is a short sequential loop.
"""

from __future__ import annotations

from lift.ir.names import fresh_name
from lift.ir.nodes import FunCall, Lambda, Param
from lift.ir.patterns import Drop, Join, Map, Reduce, Take, Zip
from lift.rules.padding import multiples
from lift.rules.rule import requires, rule


def sliced(x, view):
    """`view` applied to the array `x`, or to each array of a zip `x` (`view ∘ zip(a, b) = zip(view(a), view(b))`
    for `take` and `drop`)."""
    return Zip(*(view(a) for a in x.args)) if isinstance(x, FunCall) and isinstance(x.f, Zip) else view(x)


def _viewed(call: FunCall, view):
    """The reduction's input with `view` applied to the arrays it reads: through its map, and each of a zip's."""
    arg = call.args[0]
    if not (isinstance(arg, FunCall) and isinstance(arg.f, Map)):
        return view(arg)
    return arg.f(sliced(arg.args[0], view))


def heads(call, ctx) -> list:
    """The powers of two `k` that do not divide the length (`lift.rules.padding.multiples`), up to the length
    where it is known: a head of one element at least."""
    n = ctx.choices.value(call.args[0].t.length)
    return [c for c in multiples(call, ctx) if n is None or c["k"] <= n]


@rule("reduce-tail", figure="any-size", heads=Reduce, on_functions=False, sized=True, reassociates=True,
      choices=heads,
      description="a reduction reduces its first k·⌊n/k⌋ elements, then the rest from that result",
      equation="reduce(f, z)(x) → join(map(λs. reduce(f, s)(drop-h(x)))(reduce(f, z)(take-h(x)))), h = k·⌊n/k⌋ "
               "(through map(g): map(g) ∘ take-h)")
def reduce_tail(call, k):
    requires(isinstance(k, int) and not isinstance(k, bool) and k >= 1, f"needs a positive multiple, got {k!r}")
    h = call.args[0].t.length // k * k
    s = Param(fresh_name("s"))
    head = call.f(_viewed(call, Take(h)))
    tail = Reduce(call.f.f, s)(_viewed(call, Drop(h)))
    return Join()(Map(Lambda((s,), tail))(head))


RULES = (reduce_tail,)
