"""Softmax of every column of a matrix as a new user writes it: the row-wise softmax of the transpose, transposed
back (each column's maximum and sum of exponentials written where they are used)."""

import math

import numpy as np

from lift import ArrayType, Float, Map, Reduce, SizeVar, Transpose, fun, userfun

from blas import add

R = SizeVar("R")
C = SizeVar("C")
SIZES = {"R": 1001, "C": 999}


@userfun
def maxf(x: Float, y: Float) -> Float:
    return max(x, y)


@userfun
def exp_minus(x: Float, m: ArrayType(Float, 1)) -> Float:
    return math.exp(x - m[0])


@userfun
def divide_by(x: Float, s: ArrayType(Float, 1)) -> Float:
    return x / s[0]


def softmax_col(col):
    m = Reduce(maxf, -math.inf)(col)
    e = Map(lambda v: exp_minus(v, m))(col)
    return Map(lambda v: divide_by(v, Reduce(add, 0.0)(e)))(e)


softmax_cols = fun([ArrayType(ArrayType(Float, C), R)], lambda a: Transpose()(Map(softmax_col)(Transpose()(a))))


def reference(a):
    """numpy's softmax of each column, in float64."""
    e = np.exp(a.astype(np.float64) - a.max(axis=0, keepdims=True))
    return e / e.sum(axis=0, keepdims=True)
