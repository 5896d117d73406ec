"""A batch of small matrix products C_b = A_b B_b (8x8 each) as a new user writes it: for every pair, every row
of A against every column of B."""

import numpy as np

from lift import ArrayType, Float, Get, Join, Map, Reduce, SizeVar, Transpose, Zip, fun

from blas import add, mult

B = SizeVar("B")
SIZES = {"B": 10007}
Mat = ArrayType(ArrayType(Float, 8), 8)


def matmul(a, b):
    return Map(lambda row: Join()(Map(lambda col: Reduce(add, 0.0)(Map(mult)(Zip(row, col))))(Transpose()(b))))(a)


batched_matmul = fun([ArrayType(Mat, B), ArrayType(Mat, B)],
                     lambda A, Bs: Map(lambda p: matmul(Get(p, 0), Get(p, 1)))(Zip(A, Bs)))


def reference(A, Bs):
    return A @ Bs
