"""PolyBench's correlation as a new user writes it: the mean and the standard deviation of each column of `data`
(N samples of M variables; a deviation at most 0.1 counts as 1, as PolyBench does), the data centred and scaled by
sqrt(N) times it, and corr = Xᵀ X. `float_n` is N as a float, as PolyBench passes it."""

import math

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
def square_from(x: Float, m: Float) -> Float:
    return (x - m) * (x - m)


@userfun
def stddev_of(s: ArrayType(Float, 1), n: Float) -> Float:
    d = math.sqrt(s[0] / n)
    return 1.0 if d <= 0.1 else d


@userfun
def standardise(x: Float, m: Float, d: Float, n: Float) -> Float:
    return (x - m) / (math.sqrt(n) * d)


def _correlation(float_n, data):
    cols = Transpose()(data)
    mean = Map(lambda col: mean_of(Reduce(add, 0.0)(col), float_n))(cols)
    stddev = Map(lambda cm: stddev_of(Reduce(add, 0.0)(Map(lambda x: square_from(x, Get(cm, 1)))(Get(cm, 0))),
                                      float_n))(Zip(cols, mean))
    normed = Transpose()(Map(lambda row: Map(lambda t: standardise(Get(t, 0), Get(t, 1), Get(t, 2), float_n))(
        Zip(row, mean, stddev)))(data))
    return Map(lambda ci: Map(lambda cj: Reduce(add, 0.0)(Map(mult)(Zip(ci, cj))))(normed))(normed)


correlation = fun([Float, ArrayType(ArrayType(Float, M), N)], _correlation)


def reference(float_n, data):
    """PolyBench's correlation in float64."""
    d = data.astype(np.float64)
    stddev = d.std(axis=0)
    stddev[stddev <= 0.1] = 1.0
    x = (d - d.mean(axis=0)) / (np.sqrt(float_n) * stddev)
    return x.T @ x


def inputs(kernel, sizes, rng):
    """N as a float and uniform random data in [-1, 1), one column constant (its deviation 0 counts as 1)."""
    data = rng.uniform(-1, 1, (sizes["N"], sizes["M"])).astype(np.float32)
    data[:, 0] = 0.25
    return [np.float32(sizes["N"]), data]
