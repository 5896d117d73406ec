"""Matrix multiply `C = A B` as a user writes it: `map(λ a. map(λ b. reduce(+, 0) ∘ map(*) ∘ zip(a, b)) ∘
transpose(B))(A)`, each element a dot product of a row of `A` and a column of `B`."""

from lift import ArrayType, Float, Map, Reduce, SizeVar, Transpose, Zip, fun

from blas import add, mult

M = SizeVar("M")
K = SizeVar("K")
N = SizeVar("N")
SIZES = {"M": 1024, "K": 1024, "N": 1024}

matmul = fun([ArrayType(ArrayType(Float, K), M), ArrayType(ArrayType(Float, N), K)],
             lambda A, B: Map(lambda a: Map(lambda b: (Reduce(add, 0.0) @ Map(mult))(Zip(a, b)))(Transpose()(B)))(A))
