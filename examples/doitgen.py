"""PolyBench's doitgen, A[r, q, p] = Σ_s A[r, q, s] C4[s, p], as a new user writes it: every row of the 3-D tensor
times the matrix C4, a product per slice."""

import numpy as np

from lift import ArrayType, Float, Map, Reduce, SizeVar, Transpose, Zip, fun

from blas import add, mult

R = SizeVar("R")
Q = SizeVar("Q")
P = SizeVar("P")
SIZES = {"R": 61, "Q": 67, "P": 127}

doitgen = fun([ArrayType(ArrayType(ArrayType(Float, P), Q), R), ArrayType(ArrayType(Float, P), P)],
              lambda A, C4: Map(lambda slab: Map(lambda row: Map(
                  lambda col: Reduce(add, 0.0)(Map(mult)(Zip(row, col))))(Transpose()(C4)))(slab))(A))


def reference(A, C4):
    return np.tensordot(A, C4, axes=(2, 0))
