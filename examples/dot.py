"""dot: the dot product `reduce(add, 0) ∘ map(mult) ∘ zip(x, y)` (paper Figure 5, line 7)."""

from lift import (ArrayType, Float, Get, Join, Map, MapLcl, MapWrg, Reduce, ReduceSeq, SizeVar, Split, Zip,
                  fun, userfun)

from blas import add, mult

N = SizeVar("N")
SIZES = {"N": 1 << 24}

dot = fun([ArrayType(Float, N), ArrayType(Float, N)],
          lambda x, y: (Reduce(add, 0.0) @ Map(mult))(Zip(x, y)))


@userfun
def multiply_and_add(acc: Float, x: Float, y: Float) -> Float:
    return acc + x * y


# The Figure 9(c) strategy for dot: one work-item per work-group, a long sequential fused reduction each.
dot_cpu = fun([ArrayType(Float, N), ArrayType(Float, N)], lambda x, y: (
    ReduceSeq(add, 0.0) @ Join() @ MapWrg(
        Join() @ MapLcl(ReduceSeq(lambda acc, xy: multiply_and_add(acc, Get(xy, 0), Get(xy, 1)), 0.0)) @ Split(8192)
    ) @ Split(8192))(Zip(x, y)))
