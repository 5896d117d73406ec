"""PolyBench's syrk, C = α A Aᵀ + β C, as a new user writes it: every row of A against every row of A, each dot
product scaled and added to the old C."""

import numpy as np

from lift import ArrayType, Float, Get, Map, Reduce, SizeVar, Zip, fun, userfun

from blas import add, mult

N = SizeVar("N")
M = SizeVar("M")
SIZES = {"N": 1001, "M": 999}


@userfun
def axpby(alpha: Float, ab: ArrayType(Float, 1), beta: Float, c: Float) -> Float:
    return alpha * ab[0] + beta * c


def dot(a, b):
    return Reduce(add, 0.0)(Map(mult)(Zip(a, b)))


syrk = fun([Float, Float, ArrayType(ArrayType(Float, M), N), ArrayType(ArrayType(Float, N), N)],
           lambda alpha, beta, A, C: Map(lambda ac: Map(
               lambda bc: axpby(alpha, dot(Get(ac, 0), Get(bc, 0)), beta, Get(bc, 1)))(Zip(A, Get(ac, 1))))(Zip(A, C)))


def reference(alpha, beta, A, C):
    return alpha * (A @ A.T) + beta * C


def inputs(kernel, sizes, rng):
    """α = 1.5, β = 1.2 (PolyBench's), uniform random A and C in [-1, 1)."""
    n, m = sizes["N"], sizes["M"]
    return [np.float32(1.5), np.float32(1.2)] + [rng.uniform(-1, 1, s).astype(np.float32) for s in ((n, m), (n, n))]
