"""Softmax of every column of a matrix as a new user writes it: the row-wise softmax of the transpose, transposed
back (each column's maximum and sum of exponentials written where they are used)."""

import numpy as np

from lift import ArrayType, Float, Map, SizeVar, Transpose, fun

from softmax import softmax_row

R = SizeVar("R")
C = SizeVar("C")
SIZES = {"R": 1001, "C": 999}


softmax_cols = fun([ArrayType(ArrayType(Float, C), R)], lambda a: Transpose()(Map(softmax_row)(Transpose()(a))))


def reference(a):
    """numpy's softmax of each column, in float64."""
    e = np.exp(a.astype(np.float64) - a.max(axis=0, keepdims=True))
    return e / e.sum(axis=0, keepdims=True)
