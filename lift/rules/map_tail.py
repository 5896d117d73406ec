"""A map split into a head of a multiple of `k` elements and a short tail: `map-tail`.

    map(f)(x) → concat(map(f)(take-h(x)), map(f)(drop-h(x)))       h = k·⌊n/k⌋

for `x` of `n` elements (a zip's arrays each taken and dropped). Both sides are equal: `x = concat(take-h(x),
drop-h(x))` (`take-h` its first `h` elements, `drop-h` the `n - h` after them), and a map applies `f` to each
element on its own, so `map(f)(concat(a, b)) = concat(map(f)(a), map(f)(b))`: element `i < h` of either side is
`f(x[i])`, element `h + j` is `f(x[h + j])`. `take-h ∘ zip(a, b) = zip(take-h(a), take-h(b))` (a view of a zip is
the zip of the views), likewise `drop-h`. No `f` is excluded: nothing is reordered, padded, or computed twice.

The head's length is a multiple of `k`, which `k`-lane vectors divide (`vectorize-map`: vector loads and stores,
no test of the index), and the tail of fewer than `k` elements is a short loop of scalars; computed into a
destination, each part goes into its own slice of it (`lift.ir.patterns.Concat`). The counterpart of `reduce-tail`
(`lift.rules.reduction_tail`) for the elementwise maps of a row: softmax's `map(λx. x / s)(row)` at 999 columns.
"""

from __future__ import annotations

from lift.ir.patterns import Concat, Drop, Map, Take
from lift.rules.reduction_tail import heads, sliced
from lift.rules.rule import requires, rule


@rule("map-tail", figure="any-size", heads=Map, on_functions=False, sized=True, choices=heads,
      description="a map maps its first k·⌊n/k⌋ elements and the rest apart, concatenated",
      equation="map(f)(x) → concat(map(f)(take-h(x)), map(f)(drop-h(x))), h = k·⌊n/k⌋ (a zip's arrays each)")
def map_tail(call, k):
    requires(isinstance(k, int) and not isinstance(k, bool) and k >= 1, f"needs a positive multiple, got {k!r}")
    x = call.args[0]
    h = x.t.length // k * k
    return Concat(call.f(sliced(x, Take(h))), call.f(sliced(x, Drop(h))))


RULES = (map_tail,)
