"""Matrix transpose as a new user writes it: a copy of `transpose(A)` (numpy's `A.T.copy()`)."""

from lift import ArrayType, Float, Map, SizeVar, Transpose, fun

from blas import idf

M = SizeVar("M")
N = SizeVar("N")
SIZES = {"M": 4096, "N": 4096}

transpose = fun([ArrayType(ArrayType(Float, N), M)], lambda A: Map(Map(idf))(Transpose()(A)))
