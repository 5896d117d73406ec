"""PolyBench's gesummv, y = α A x + β B x, as a new user writes it: one pass over the rows of A and B."""

import numpy as np

from lift import ArrayType, Float, Get, Map, Reduce, SizeVar, Zip, fun, userfun

from blas import add, mult

N = SizeVar("N")
SIZES = {"N": 2003}


@userfun
def axpby(alpha: Float, ax: ArrayType(Float, 1), beta: Float, bx: ArrayType(Float, 1)) -> Float:
    return alpha * ax[0] + beta * bx[0]


def dot(a, b):
    return Reduce(add, 0.0)(Map(mult)(Zip(a, b)))


Vec = ArrayType(Float, N)
gesummv = fun([Float, Float, ArrayType(Vec, N), ArrayType(Vec, N), Vec], lambda alpha, beta, A, B, x: Map(
    lambda ab: axpby(alpha, dot(Get(ab, 0), x), beta, dot(Get(ab, 1), x)))(Zip(A, B)))


def reference(alpha, beta, A, B, x):
    return alpha * (A @ x) + beta * (B @ x)


def inputs(kernel, sizes, rng):
    """α = 1.5, β = 1.2 (PolyBench's), uniform random matrices and x in [-1, 1)."""
    n = sizes["N"]
    return [np.float32(1.5), np.float32(1.2)] + [rng.uniform(-1, 1, s).astype(np.float32) for s in ((n, n), (n, n), n)]
