"""PolyBench's mvt, x1 + A y1 and x2 + Aᵀ y2, as a new user writes it."""

import numpy as np

from lift import ArrayType, Float, Get, Map, Reduce, SizeVar, Transpose, Tuple, Zip, fun, userfun

from blas import add, mult

N = SizeVar("N")
SIZES = {"N": 2003}


@userfun
def plus_sum(x: Float, s: ArrayType(Float, 1)) -> Float:
    return x + s[0]


def dot(a, b):
    return Reduce(add, 0.0)(Map(mult)(Zip(a, b)))


def _updated(x, rows, y):
    """x + rows · y, row by row."""
    return Map(lambda xr: plus_sum(Get(xr, 0), dot(Get(xr, 1), y)))(Zip(x, rows))


Vec = ArrayType(Float, N)
mvt = fun([ArrayType(Vec, N), Vec, Vec, Vec, Vec], lambda A, x1, x2, y1, y2: Tuple(
    _updated(x1, A, y1), _updated(x2, Transpose()(A), y2)))


def reference(A, x1, x2, y1, y2):
    return x1 + A @ y1, x2 + A.T @ y2


def inputs(kernel, sizes, rng):
    """Uniform random values in [-1, 1)."""
    n = sizes["N"]
    return [rng.uniform(-1, 1, shape).astype(np.float32) for shape in ((n, n), n, n, n, n)]
