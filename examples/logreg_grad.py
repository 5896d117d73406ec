"""The gradient of logistic regression's loss, Xᵀ(sigmoid(X w) - y), as a new user writes it: the residual of
every sample (a dot product, a sigmoid and a difference), then its dot product with every column of X."""

import math

import numpy as np

from lift import ArrayType, Float, Get, Join, Map, Reduce, SizeVar, Transpose, Zip, fun, userfun

from blas import add, mult

N = SizeVar("N")
D = SizeVar("D")
SIZES = {"N": 10007, "D": 61}


@userfun
def residual(z: Float, y: Float) -> Float:
    return 1.0 / (1.0 + math.exp(-z)) - y


def dot(a, b):
    return Reduce(add, 0.0)(Map(mult)(Zip(a, b)))


def gradient(X, w, y):
    r = Join()(Map(lambda p: Map(lambda z: residual(z, Get(p, 1)))(dot(Get(p, 0), w)))(Zip(X, y)))
    return Join()(Map(lambda col: dot(col, r))(Transpose()(X)))


logreg_grad = fun([ArrayType(ArrayType(Float, D), N), ArrayType(Float, D), ArrayType(Float, N)], gradient)


def inputs(kernel, sizes, rng):
    n, d = sizes["N"], sizes["D"]
    return [rng.uniform(-1, 1, (n, d)).astype(np.float32), rng.uniform(-1, 1, d).astype(np.float32),
            (rng.uniform(0, 1, n) < 0.5).astype(np.float32)]


def reference(X, w, y):
    return X.T @ (1.0 / (1.0 + np.exp(-(X @ w))) - y)
