"""The assignment step of k-means as a new user writes it: for every point, the index of its nearest centroid,
a user function looping over all the centroids (`range(K)`, `K` a size variable the kernel passes) of one
point. The point is copied to private memory (`private-argument`), the centroids are read where they are
(global memory); nothing lowered."""

import numpy as np

from lift import ArrayType, Float, Int, Map, SizeVar, fun, userfun

N = SizeVar("N")
K = SizeVar("K")
SIZES = {"N": 100_003, "K": 17}


@userfun
def nearest(p: ArrayType(Float, 4), cs: ArrayType(ArrayType(Float, 4), K)) -> Int:
    best = 0
    bestd = 3.0e38
    for c in range(K):
        d = 0.0
        for i in range(4):
            t = p[i] - cs[c][i]
            d += t * t
        if d < bestd:
            bestd = d
            best = c
    return best


kmeans = fun([ArrayType(ArrayType(Float, 4), N), ArrayType(ArrayType(Float, 4), K)],
             lambda P, C: Map(lambda p: nearest(p, C))(P))


def reference(P, C):
    """numpy's nearest centroids (squared distances in float64)."""
    return np.argmin(((P[:, None, :].astype(np.float64) - C[None, :, :]) ** 2).sum(-1), axis=1).astype(np.int32)
