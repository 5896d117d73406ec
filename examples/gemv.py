"""gemv: `y = a*A*x + b*y` (paper Figure 5, lines 8-10), reusing dot and scal as building blocks."""

from lift import ArrayType, Float, Join, Map, Reduce, SizeVar, Zip, fun

from blas import add, mult

M = SizeVar("M")
N = SizeVar("N")
SIZES = {"M": 4096, "N": 4096}


def scal(a):
    """`scal(a)`: the map of `mult(a)`, partially applied as in Figure 5."""
    return Map(lambda v: mult(a, v))


def dot(x):
    """`dot(x)`: the dot product with `x`, a function of the other vector."""
    return lambda row: (Reduce(add, 0.0) @ Map(mult))(Zip(x, row))


gemv = fun([ArrayType(ArrayType(Float, N), M), ArrayType(Float, N), ArrayType(Float, M), Float, Float],
           lambda A, x, y, a, b: Map(add)(Zip(
               Join()(Map(scal(a) @ dot(x))(A)),
               scal(b)(y))))
