"""Split-join (Figure 3(c)): a map becomes a map of maps over chunks.

    map(f) → join ∘ map(map(f)) ∘ split-n

`split-n` cuts the array into chunks of `n`, the outer map runs over the chunks and the inner one
over each chunk's elements, and `join` concatenates the results in order: the same array. This is
how one map meets two levels of the thread hierarchy (`map-workgroup(map-local(f))`, Figure 2).
`n` is any factor of the array's length.

    map(map(f))(x) → split-n(map(f)(join(x)))        (flatten-map; n the length of x's rows)

The same equation read right to left: a map over the rows of `x` whose function maps `f` over each row (point-free,
or `λr. map(f)(r)` with `f` not reading `r`) is one map over all the elements, cut back into rows of `n`. A batch
of matrix products with one right operand (PolyBench's doitgen, `A[r, q, :] C4` for every slab `r`) becomes one
product of the joined rows, the shape the register blocking matches (`lift.rules.macro_rules`).
"""

from __future__ import annotations

from lift.ir.nodes import FunCall, Lambda, free_params
from lift.ir.patterns import Join, Map, Split
from lift.rules.rule import requires, rule


@rule("split-join", figure="3(c)", description="partition a map into a map of maps over chunks of n elements",
      equation="map(f) → join ∘ map(map(f)) ∘ split-n", heads=Map, param="n")
def split_join(call, n):
    return Join()(Map(call.f)(Split(n)(call.args[0])))


def _row_function(call) -> tuple:
    """`(map(f),)` of `map(map(f))` or `map(λr. map(f)(r))`, `f` not reading `r`."""
    g = call.f.f
    if isinstance(g, Lambda) and len(g.params) == 1 and isinstance(g.body, FunCall) and g.body.args == g.params:
        g = g.body.f if g.params[0] not in free_params(g.body.f) else None
    requires(isinstance(g, Map), "the mapped function is not a map over each row")
    return (g,)


@rule("flatten-map", figure="3(c)", description="a map of a map over each row is one map over the joined rows, "
      "split back into rows", equation="map(map(f))(x) → split-n(map(f)(join(x)))", heads=Map, on_functions=False,
      match=_row_function, sized=True)
def flatten_map(call, row_map):
    return Split(call.args[0].t.elem.length)(row_map(Join()(call.args[0])))


RULES = (split_join, flatten_map)
