"""Single-head attention softmax(Q Kᵀ / sqrt(d)) V as a new user writes it: for every query row, its scores
against every key row, their softmax, and the weighted sum of the value rows (columns of V); nothing lowered."""

import math

import numpy as np

from lift import ArrayType, Float, Join, Map, Reduce, SizeVar, Transpose, Zip, fun, userfun

from blas import add, mult

S = SizeVar("S")
D = SizeVar("D")
SIZES = {"S": 257, "D": 61}
SCALE = 1.0 / math.sqrt(61.0)


@userfun
def maxf(x: Float, y: Float) -> Float:
    return max(x, y)


@userfun
def exp_minus(x: Float, m: ArrayType(Float, 1)) -> Float:
    return math.exp(x - m[0])


@userfun
def divide_by(x: Float, s: ArrayType(Float, 1)) -> Float:
    return x / s[0]


def dot(a, b):
    return Reduce(add, 0.0)(Map(mult)(Zip(a, b)))


def attention_row(q, K, V):
    scores = Join()(Map(lambda k: Map(lambda v: v * SCALE)(dot(q, k)))(K))
    m = Reduce(maxf, -math.inf)(scores)
    e = Map(lambda v: exp_minus(v, m))(scores)
    p = Map(lambda v: divide_by(v, Reduce(add, 0.0)(e)))(e)
    return Join()(Map(lambda col: dot(p, col))(Transpose()(V)))


Mat = ArrayType(ArrayType(Float, D), S)
attention = fun([Mat, Mat, Mat], lambda Q, K, V: Map(lambda q: attention_row(q, K, V))(Q))


def reference(Q, K, V):
    s = (Q @ K.T) * np.float32(SCALE)
    e = np.exp(s - s.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True)) @ V
