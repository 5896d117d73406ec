"""Lowering maps onto OpenCL's threads (Figure 4(a)).

    map(f) → map-workgroup(f) | map-local(f) | map-global(f) | map-seq(f)

All four mean `map(f)` (Table 2); they differ in who runs the iterations. Each alternative is a rule
that applies only where OpenCL's thread hierarchy allows it (`lift.rules.hierarchy`), with a choice
of dimension for the parallel ones.
"""

from __future__ import annotations

from lift.ir.patterns import Map, MapGlb, MapLcl, MapSeq, MapWrg
from lift.rules.hierarchy import is_sequential_safe, parallel_dims
from lift.rules.rule import Rule, expect, requires, rule


class ParallelMapLowering(Rule):
    """`map(f) → kind(f)` on a dimension the thread hierarchy leaves free."""

    figure = "4(a)"
    heads = (Map,)

    def __init__(self, kind: type, who: str):
        self.kind = kind
        self.name = "map-to-" + kind.paper.removeprefix("map-")
        self.description = f"{who} applies f to different elements"
        self.equation = f"map(f) → {kind.paper}(f)"

    def choices(self, call, ctx):
        dims = parallel_dims(self.kind, tuple(ctx.enclosing())[::-1], self.head(call).f)
        expect(bool(dims), self, f"the thread hierarchy does not allow a {self.kind.paper} here")
        return [{"dim": d} for d in dims]

    def apply(self, call, params):
        expect(params.get("dim") in (0, 1, 2), self, f"no OpenCL dimension {params.get('dim')!r}")
        return self.kind(self.head(call).f, params["dim"])(*call.args)


@rule("map-to-seq", figure="4(a)", description="one work-item applies f to every element in turn",
      equation="map(f) → map-seq(f)", heads=Map,
      allowed=lambda call, ctx: requires(is_sequential_safe(call.f.f), "the mapped function has parallel maps inside"))
def map_to_seq(call):
    return MapSeq(call.f.f)(*call.args)


RULES = (ParallelMapLowering(MapWrg, "each work-group"), ParallelMapLowering(MapLcl, "each work-item of a work-group"),
         ParallelMapLowering(MapGlb, "each work-item"), map_to_seq)
