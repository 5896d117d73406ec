"""PolyBench's covariance, as a new user writes it: the mean of each column of `data` (N samples of M
variables), the data centred on it, and cov = centredᵀ centred / (N - 1). `float_n` is N as a float, as
PolyBench passes it."""

import numpy as np

from lift import ArrayType, Float, Get, Map, Reduce, SizeVar, Transpose, Zip, fun, userfun

from blas import add, mult

M = SizeVar("M")
N = SizeVar("N")
SIZES = {"M": 251, "N": 1001}


@userfun
def mean_of(s: ArrayType(Float, 1), n: Float) -> Float:
    return s[0] / n


@userfun
def sub(x: Float, y: Float) -> Float:
    return x - y


@userfun
def unbiased(s: ArrayType(Float, 1), n: Float) -> Float:
    return s[0] / (n - 1.0)


def _covariance(float_n, data):
    mean = Map(lambda col: mean_of(Reduce(add, 0.0)(col), float_n))(Transpose()(data))
    centred = Map(lambda row: Map(lambda xm: sub(Get(xm, 0), Get(xm, 1)))(Zip(row, mean)))(data)
    cols = Transpose()(centred)
    return Map(lambda ci: Map(lambda cj: unbiased(Reduce(add, 0.0)(Map(mult)(Zip(ci, cj))), float_n))(cols))(cols)


covariance = fun([Float, ArrayType(ArrayType(Float, M), N)], _covariance)


def reference(float_n, data):
    centred = data - data.mean(axis=0)
    return centred.T @ centred / (float_n - 1)


def inputs(kernel, sizes, rng):
    """N as a float and uniform random data in [-1, 1)."""
    return [np.float32(sizes["N"]), rng.uniform(-1, 1, (sizes["N"], sizes["M"])).astype(np.float32)]
