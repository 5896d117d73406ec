"""A batch of small matrix-vector products y_b = A_b x_b (16x16 each) as a new user writes it: for every pair,
every row of A against x."""

import numpy as np

from lift import ArrayType, Float, Get, Map, Reduce, SizeVar, Zip, fun

from blas import add, mult

B = SizeVar("B")
SIZES = {"B": 4096}
Mat = ArrayType(ArrayType(Float, 16), 16)
Vec = ArrayType(Float, 16)

batched_gemv = fun([ArrayType(Mat, B), ArrayType(Vec, B)], lambda As, xs: Map(lambda p: Map(
    lambda row: Reduce(add, 0.0)(Map(mult)(Zip(row, Get(p, 1)))))(Get(p, 0)))(Zip(As, xs)))


def reference(As, xs):
    return np.einsum("bij,bj->bi", As, xs)
