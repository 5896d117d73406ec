"""Layer normalisation of every row as a new user writes it: (x - mean) / sqrt(var + eps)."""

import math

import numpy as np

from lift import ArrayType, Float, Map, Reduce, SizeVar, fun, userfun

from blas import add

R = SizeVar("R")
C = SizeVar("C")
SIZES = {"R": 1001, "C": 999}
EPS = 1e-5


@userfun
def centre(x: Float, s: ArrayType(Float, 1), n: Float) -> Float:
    return x - s[0] / n


@userfun
def sq(x: Float) -> Float:
    return x * x


@userfun
def scale(x: Float, ss: ArrayType(Float, 1), n: Float) -> Float:
    return x / math.sqrt(ss[0] / n + EPS)


def ln_row(row, n):
    d = Map(lambda v: centre(v, Reduce(add, 0.0)(row), n))(row)
    return Map(lambda v: scale(v, Reduce(add, 0.0)(Map(sq)(d)), n))(d)


layernorm = fun([ArrayType(ArrayType(Float, C), R), Float], lambda a, n: Map(lambda row: ln_row(row, n))(a))


def inputs(kernel, sizes, rng):
    """Uniform random values in [-1, 1)."""
    return [rng.uniform(-1, 1, (sizes["R"], sizes["C"])).astype(np.float32), np.float32(sizes["C"])]


def reference(a, n):
    m = a.mean(axis=1, keepdims=True)
    return (a - m) / np.sqrt(((a - m) ** 2).mean(axis=1, keepdims=True) + EPS)
