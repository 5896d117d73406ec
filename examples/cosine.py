"""Cosine similarity of every row of A with every row of B, as a new user writes it."""

import math

import numpy as np

from lift import ArrayType, Float, Map, Reduce, SizeVar, Zip, fun, userfun

from blas import add, mult

M = SizeVar("M")
N = SizeVar("N")
K = SizeVar("K")
SIZES = {"M": 257, "N": 251, "K": 127}


@userfun
def cos_of(ab: ArrayType(Float, 1), aa: ArrayType(Float, 1), bb: ArrayType(Float, 1)) -> Float:
    return ab[0] / math.sqrt(aa[0] * bb[0])


def dot(x, y):
    return Reduce(add, 0.0)(Map(mult)(Zip(x, y)))


cosine = fun([ArrayType(ArrayType(Float, K), M), ArrayType(ArrayType(Float, K), N)], lambda A, B: Map(
    lambda a: Map(lambda b: cos_of(dot(a, b), dot(a, a), dot(b, b)))(B))(A))


def reference(A, B):
    return (A @ B.T) / np.sqrt(np.outer((A * A).sum(1), (B * B).sum(1)))


def inputs(kernel, sizes, rng):
    """Uniform random values in [-1, 1)."""
    return [rng.uniform(-1, 1, (sizes[rows], sizes["K"])).astype(np.float32) for rows in "MN"]
