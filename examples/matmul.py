"""Matrix multiply `C = A B`: each element of C is the dot product of a row of A and a column of B,

    map(λa. map(λb. reduce(+, 0) ∘ map(*) ∘ zip(a, b)) ∘ transpose(B))(A),

written as a new user would; `lift explore` derives its tiled, register-blocked lowerings with the macro
rules (`lift.rules.register_blocking`, `lift.rules.tiling`, `lift.rules.interchange`)."""

from lift import ArrayType, Float, Map, Reduce, SizeVar, Transpose, Zip, fun

from blas import add, mult

M = SizeVar("M")
K = SizeVar("K")
N = SizeVar("N")
SIZES = {"M": 1024, "K": 1024, "N": 1024}

matmul = fun([ArrayType(ArrayType(Float, K), M), ArrayType(ArrayType(Float, N), K)],
             lambda A, B: Map(lambda a: Map(lambda b: (Reduce(add, 0.0) @ Map(mult))(Zip(a, b)))(Transpose()(B)))(A))
