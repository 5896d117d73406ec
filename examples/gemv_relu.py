"""A dense layer: relu(A x + b), as a new user writes it."""

import numpy as np

from lift import ArrayType, Float, Get, Map, Reduce, SizeVar, Zip, fun, userfun

from blas import add, mult

M = SizeVar("M")
N = SizeVar("N")
SIZES = {"M": 1001, "N": 999}


@userfun
def bias_relu(s: ArrayType(Float, 1), b: Float) -> Float:
    return max(s[0] + b, 0.0)


gemv_relu = fun([ArrayType(ArrayType(Float, N), M), ArrayType(Float, N), ArrayType(Float, M)], lambda A, x, b: Map(
    lambda rb: bias_relu(Reduce(add, 0.0)(Map(mult)(Zip(Get(rb, 0), x))), Get(rb, 1)))(Zip(A, b)))


def reference(A, x, b):
    return np.maximum(A @ x + b, 0)


def inputs(kernel, sizes, rng):
    """Uniform random values in [-1, 1)."""
    return [rng.uniform(-1, 1, shape).astype(np.float32) for shape in ((sizes["M"], sizes["N"]), sizes["N"], sizes["M"])]
