"""Nearest-centroid classification as a new user writes it: for each query, the squared distance to every centroid
(a reduction over the D features), then the (index, distance) pair of the smallest, a reduction of tuples."""

import math

import numpy as np

from lift import ArrayType, Float, Get, Int, Join, Map, Reduce, SizeVar, Zip, fun, userfun

from blas import add

N = SizeVar("N")
K = SizeVar("K")
D = SizeVar("D")
SIZES = {"N": 20011, "K": 37, "D": 19}


@userfun
def squared_difference(a: Float, b: Float) -> Float:
    return (a - b) * (a - b)


@userfun(associative=True)
def closer(a: (Int, Float), b: (Int, Float)) -> (Int, Float):
    if a[1] < b[1] or (a[1] == b[1] and a[0] < b[0]):
        return (a[0], a[1])
    return (b[0], b[1])


def distance(q, c):
    return Reduce(add, 0.0)(Map(lambda ab: squared_difference(Get(ab, 0), Get(ab, 1)))(Zip(q, c)))


nearest_centroid = fun(
    [ArrayType(ArrayType(Float, D), N), ArrayType(ArrayType(Float, D), K), ArrayType(Int, K)],
    lambda Q, C, ks: Map(lambda q: Reduce(closer, (-1, math.inf))(
        Zip(ks, Join()(Map(lambda c: distance(q, c))(C)))))(Q))


def reference(Q, C, ks):
    """numpy's nearest centroid (float64 distances) and its squared distance."""
    d = ((Q[:, None, :].astype(np.float64) - C[None, :, :]) ** 2).sum(-1)
    i = d.argmin(axis=1)
    return np.stack([ks[i], d[np.arange(len(Q)), i]], axis=-1)


def inputs(kernel, sizes, rng):
    """Uniform random queries and centroids in [-1, 1), the centroid indices 0 .. K - 1."""
    return [rng.uniform(-1, 1, (sizes["N"], sizes["D"])).astype(np.float32),
            rng.uniform(-1, 1, (sizes["K"], sizes["D"])).astype(np.float32), np.arange(sizes["K"], dtype=np.int32)]
