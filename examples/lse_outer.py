"""The outer product of two vectors, then the log-sum-exp of every row, as a new user writes it:
log(sum(exp(v - max))) + max per row of x yᵀ."""

import math

import numpy as np

from lift import ArrayType, Float, Join, Map, Reduce, SizeVar, fun, userfun

from blas import add

M = SizeVar("M")
N = SizeVar("N")
SIZES = {"M": 1009, "N": 997}


@userfun
def maxf(x: Float, y: Float) -> Float:
    return max(x, y)


@userfun
def exp_minus(x: Float, m: ArrayType(Float, 1)) -> Float:
    return math.exp(x - m[0])


@userfun
def log_plus(s: Float, m: ArrayType(Float, 1)) -> Float:
    return math.log(s) + m[0]


def lse(row):
    m = Reduce(maxf, -math.inf)(row)
    return Map(lambda s: log_plus(s, m))(Reduce(add, 0.0)(Map(lambda v: exp_minus(v, m))(row)))


lse_outer = fun([ArrayType(Float, M), ArrayType(Float, N)],
                lambda x, y: Join()(Map(lambda a: lse(Map(lambda b: a * b)(y)))(x)))


def reference(x, y):
    o = np.outer(x, y)
    m = o.max(axis=1)
    return np.log(np.exp(o - m[:, None]).sum(axis=1)) + m
