"""One step of all-pairs shortest paths as a new user writes it: the min-plus (tropical) matrix product
C[i, j] = min_k A[i, k] + B[k, j], every row of A against every column of B."""

import math

import numpy as np

from lift import ArrayType, Float, Map, Reduce, SizeVar, Transpose, Zip, fun, userfun

from blas import add

N = SizeVar("N")
K = SizeVar("K")
M = SizeVar("M")
SIZES = {"N": 511, "K": 509, "M": 513}


@userfun
def fminf(x: Float, y: Float) -> Float:
    return min(x, y)


minplus = fun([ArrayType(ArrayType(Float, K), N), ArrayType(ArrayType(Float, M), K)], lambda A, B: Map(
    lambda row: Map(lambda col: Reduce(fminf, math.inf)(Map(add)(Zip(row, col))))(Transpose()(B)))(A))


def reference(A, B):
    """numpy's product, one k at a time (a 3-D broadcast would not fit in memory at large sizes)."""
    C = np.full((A.shape[0], B.shape[1]), np.inf, np.float32)
    for k in range(A.shape[1]):
        np.minimum(C, A[:, k, None] + B[None, k, :], out=C)
    return C


def inputs(kernel, sizes, rng):
    """Edge weights in [0, 10)."""
    return [rng.uniform(0, 10, shape).astype(np.float32) for shape in
            ((sizes["N"], sizes["K"]), (sizes["K"], sizes["M"]))]
