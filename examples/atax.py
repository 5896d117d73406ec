"""PolyBench's atax, y = Aᵀ(A x), as a new user writes it: the product A x, then its product with the
columns of A."""

import numpy as np

from lift import ArrayType, Float, Join, Map, Reduce, SizeVar, Transpose, Zip, fun

from blas import add, mult

M = SizeVar("M")
N = SizeVar("N")
SIZES = {"M": 1001, "N": 999}


def dot(a, b):
    return Reduce(add, 0.0)(Map(mult)(Zip(a, b)))


def _atax(A, x):
    ax = Join()(Map(lambda row: dot(row, x))(A))
    return Join()(Map(lambda col: dot(col, ax))(Transpose()(A)))


atax = fun([ArrayType(ArrayType(Float, N), M), ArrayType(Float, N)], _atax)


def reference(A, x):
    return A.T @ (A @ x)


def inputs(kernel, sizes, rng):
    """Uniform random values in [-1, 1)."""
    return [rng.uniform(-1, 1, shape).astype(np.float32) for shape in ((sizes["M"], sizes["N"]), sizes["N"])]
