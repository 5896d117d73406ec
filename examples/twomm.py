"""PolyBench's 2mm, D := α A B C + β D, as a new user writes it: two matrix products, the first scaled by α,
the second added to β D."""

import numpy as np

from lift import ArrayType, Float, Get, Map, Reduce, SizeVar, Transpose, Zip, fun, userfun

from blas import add, mult

NI, NJ, NK, NL = SizeVar("NI"), SizeVar("NJ"), SizeVar("NK"), SizeVar("NL")
SIZES = {"NI": 181, "NJ": 191, "NK": 211, "NL": 223}


@userfun
def scaled(alpha: Float, s: ArrayType(Float, 1)) -> Float:
    return alpha * s[0]


@userfun
def plus_scaled(s: ArrayType(Float, 1), beta: Float, d: Float) -> Float:
    return s[0] + beta * d


def dot(a, b):
    return Reduce(add, 0.0)(Map(mult)(Zip(a, b)))


def Mat(rows, cols):
    return ArrayType(ArrayType(Float, cols), rows)


def _twomm(alpha, beta, A, B, C, D):
    tmp = Map(lambda a: Map(lambda b: scaled(alpha, dot(a, b)))(Transpose()(B)))(A)
    return Map(lambda td: Map(lambda cd: plus_scaled(dot(Get(td, 0), Get(cd, 0)), beta, Get(cd, 1)))(
        Zip(Transpose()(C), Get(td, 1))))(Zip(tmp, D))


twomm = fun([Float, Float, Mat(NI, NK), Mat(NK, NJ), Mat(NJ, NL), Mat(NI, NL)], _twomm)


def reference(alpha, beta, A, B, C, D):
    return alpha * (A @ B) @ C + beta * D


def inputs(kernel, sizes, rng):
    """α = 1.5, β = 1.2 (PolyBench's), uniform random matrices in [-1, 1)."""
    ni, nj, nk, nl = (sizes[k] for k in ("NI", "NJ", "NK", "NL"))
    return [np.float32(1.5), np.float32(1.2)] + [
        rng.uniform(-1, 1, s).astype(np.float32) for s in ((ni, nk), (nk, nj), (nj, nl), (ni, nl))]
