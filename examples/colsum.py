"""Column sums `map(reduce(+, 0)) ∘ transpose(A)` as a new user writes them (numpy's `A.sum(axis=0)`)."""

from lift import ArrayType, Float, Map, Reduce, SizeVar, Transpose, fun

from blas import add

M = SizeVar("M")
N = SizeVar("N")
SIZES = {"M": 4096, "N": 4096}

colsum = fun([ArrayType(ArrayType(Float, N), M)], lambda A: Map(Reduce(add, 0.0))(Transpose()(A)))
