"""asum: the sum of absolute values (paper Figure 5, line 6), and the hand-derived Figure 9 expressions.

`asum` is what a user writes; `asum_nvidia`, `asum_amd` and `asum_intel` are the paper's device-specific
low-level expressions (Figure 9 (a), (b), (c)), derived from it by the rewrite rules.
"""

from lift import (ArrayType, AsScalar, AsVector, Float, Id, Iterate, Join, Map, MapGlb, MapLcl, MapSeq, MapWrg, Reduce,
                  ReduceSeq, ReorderStride, SizeVar, Split, ToGlobal, ToLocal, Vectorize, fun)

from blas import abs_and_add, absf, add

N = SizeVar("N")
SIZES = {"N": 1 << 24}

asum = fun([ArrayType(Float, N)], lambda x: (Reduce(add, 0.0) @ Map(absf))(x))

# Figure 9(a): local-memory tree, coalesced by reorder-stride (Nvidia).
asum_nvidia = fun([ArrayType(Float, N)], lambda x: (
    ReduceSeq(add, 0.0) @ Join() @ MapWrg(
        Join() @ ToGlobal(MapLcl(MapSeq(Id()))) @ Split(1)
        @ Iterate(7, Join() @ MapLcl(ReduceSeq(add, 0.0)) @ Split(2))
        @ Join() @ ToLocal(MapLcl(ReduceSeq(abs_and_add, 0.0))) @ Split(2048) @ ReorderStride(128)
    ) @ Split(262144))(x))

# Figure 9(b): the same, vectorised by 4 (AMD).
asum_amd = fun([ArrayType(Float, N)], lambda x: (
    ReduceSeq(add, 0.0) @ Join() @ AsScalar() @ MapWrg(
        Join() @ ToGlobal(MapLcl(MapSeq(Vectorize(4, Id())))) @ Split(1)
        @ Iterate(8, Join() @ MapLcl(ReduceSeq(Vectorize(4, add), Vectorize(4, 0.0))) @ Split(2))
        @ Join() @ ToLocal(MapLcl(ReduceSeq(Vectorize(4, abs_and_add), Vectorize(4, 0.0))))
        @ Split(2) @ ReorderStride(256)
    ) @ AsVector(4) @ Split(2048))(x))

# Figure 9(c): one work-item per work-group, long vectorised sequential reductions (Intel CPU).
asum_intel = fun([ArrayType(Float, N)], lambda x: (
    ReduceSeq(add, 0.0) @ Join() @ AsScalar() @ MapWrg(
        Join() @ MapLcl(ReduceSeq(Vectorize(4, abs_and_add), Vectorize(4, 0.0))) @ Split(8192)
    ) @ AsVector(4) @ Split(32768))(x))

# Figure 9(c) with map-global: the same chunks, one work-item each, the work-group size left to the driver.
asum_cpu = fun([ArrayType(Float, N)], lambda x: (
    ReduceSeq(add, 0.0) @ Join() @ AsScalar()
    @ MapGlb(ReduceSeq(Vectorize(4, abs_and_add), Vectorize(4, 0.0))) @ Split(8192) @ AsVector(4))(x))
