"""The Frobenius norm of a matrix as a new user writes it: the square root of the sum of its squared elements."""

import numpy as np

import lift
from lift import ArrayType, Float, Join, Map, Reduce, SizeVar, fun

from blas import add

M = SizeVar("M")
N = SizeVar("N")
SIZES = {"M": 4096, "N": 4096}

frobenius = fun([ArrayType(ArrayType(Float, N), M)], lambda A: Map(lambda s: lift.sqrt(s))(
    Reduce(add, 0.0)(Map(lambda v: v * v)(Join()(A)))))


def reference(A):
    return np.array([np.linalg.norm(A)])
