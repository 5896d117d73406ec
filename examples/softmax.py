"""Softmax of every row of a matrix as a new user writes it: the row's maximum and the sum of its
exponentials are reductions inside the map over rows, written where they are used. The default lowering and
`lift explore` bind them once per row (`hoist-invariant` inside the map, `let-out-of-argument`), so that each
row costs a few passes, not one per element; nothing lowered."""

import math

import numpy as np

from lift import ArrayType, Float, Map, Reduce, SizeVar, fun, userfun

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


def softmax_row(row):
    """`exp(row - max(row)) / sum(exp(row - max(row)))`."""
    m = Reduce(maxf, -math.inf)(row)
    e = Map(lambda v: exp_minus(v, m))(row)
    return Map(lambda v: divide_by(v, Reduce(add, 0.0)(e)))(e)


softmax = fun([ArrayType(ArrayType(Float, C), R)], lambda a: Map(softmax_row)(a))


def reference(a):
    """numpy's softmax of each row, in float64."""
    e = np.exp(a.astype(np.float64) - a.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)
