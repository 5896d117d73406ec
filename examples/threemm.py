"""PolyBench's 3mm as a new user writes it: a chain of three matrix products, E = A B, F = C D, G = E F, each the
dot product of a row with a column of the transposed right operand (each a reduction's array of one
element, the row joined)."""

from lift import ArrayType, Float, Join, Map, Reduce, SizeVar, Transpose, Zip, fun

from blas import add, mult

NI, NJ, NK, NL, NM = (SizeVar(n) for n in ("NI", "NJ", "NK", "NL", "NM"))
SIZES = {"NI": 401, "NJ": 427, "NK": 449, "NL": 473, "NM": 499}


def product(a, b):
    return Map(lambda row: Join()(Map(lambda col: Reduce(add, 0.0)(Map(mult)(Zip(row, col))))(Transpose()(b))))(a)


threemm = fun([ArrayType(ArrayType(Float, NK), NI), ArrayType(ArrayType(Float, NJ), NK),
               ArrayType(ArrayType(Float, NM), NJ), ArrayType(ArrayType(Float, NL), NM)],
              lambda A, B, C, D: product(product(A, B), product(C, D)))


def reference(A, B, C, D):
    return (A @ B) @ (C @ D)
