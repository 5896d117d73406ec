"""PolyBench's bicg (the BiCG sub-kernel), s = Aᵀ r and q = A p, as a new user writes it."""

import numpy as np

from lift import ArrayType, Float, Join, Map, Reduce, SizeVar, Transpose, Tuple, Zip, fun

from blas import add, mult

M = SizeVar("M")
N = SizeVar("N")
SIZES = {"M": 1001, "N": 999}


def dot(a, b):
    return Reduce(add, 0.0)(Map(mult)(Zip(a, b)))


bicg = fun([ArrayType(ArrayType(Float, N), M), ArrayType(Float, M), ArrayType(Float, N)], lambda A, r, p: Tuple(
    Join()(Map(lambda col: dot(col, r))(Transpose()(A))),
    Join()(Map(lambda row: dot(row, p))(A))))


def reference(A, r, p):
    return A.T @ r, A @ p


def inputs(kernel, sizes, rng):
    """Uniform random values in [-1, 1)."""
    return [rng.uniform(-1, 1, shape).astype(np.float32)
            for shape in ((sizes["M"], sizes["N"]), sizes["M"], sizes["N"])]
