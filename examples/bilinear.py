"""The bilinear form xᵀ A y as a new user writes it: every row of A against y, weighted by x's element, summed."""

import numpy as np

from lift import ArrayType, Float, Get, Join, Map, Reduce, SizeVar, Zip, fun

from blas import add, mult

M = SizeVar("M")
N = SizeVar("N")
SIZES = {"M": 4096, "N": 4096}

bilinear = fun([ArrayType(Float, M), ArrayType(ArrayType(Float, N), M), ArrayType(Float, N)], lambda x, A, y: Reduce(
    add, 0.0)(Join()(Map(lambda p: Map(lambda s: mult(Get(p, 0), s))(Reduce(add, 0.0)(Map(mult)(Zip(Get(p, 1), y)))))(
        Zip(x, A)))))


def reference(x, A, y):
    return np.array([x @ (A @ y)])
