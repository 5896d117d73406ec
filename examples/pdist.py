"""All-pairs Euclidean distances between the points `P` and `Q` as a new user writes them: a map over `P` of a
map over `Q` of a user function reading two rows (`p[i]`). Each row is copied to private memory first
(`private-argument`); nothing lowered."""

import math

import numpy as np

from lift import ArrayType, Float, Map, SizeVar, fun, userfun

N = SizeVar("N")
M = SizeVar("M")
SIZES = {"N": 2001, "M": 1999}


@userfun
def dist(p: ArrayType(Float, 3), q: ArrayType(Float, 3)) -> Float:
    s = 0.0
    for i in range(3):
        d = p[i] - q[i]
        s += d * d
    return math.sqrt(s)


pdist = fun([ArrayType(ArrayType(Float, 3), N), ArrayType(ArrayType(Float, 3), M)],
            lambda P, Q: Map(lambda p: Map(lambda q: dist(p, q))(Q))(P))


def reference(P, Q):
    """numpy's distances, in float64."""
    return np.sqrt(((P[:, None, :].astype(np.float64) - Q[None, :, :]) ** 2).sum(-1))
