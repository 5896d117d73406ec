"""A dense layer of a small network as a new user writes it: GELU (the tanh form) of x W + b for every row x of a
batch, each output the dot product of the row with a column of W plus its bias."""

import math

import numpy as np

from lift import ArrayType, Float, Get, Map, Reduce, SizeVar, Transpose, Zip, fun, userfun

from blas import add, mult

B = SizeVar("B")
I = SizeVar("I")
O = SizeVar("O")
SIZES = {"B": 1001, "I": 257, "O": 511}


@userfun
def gelu_plus(s: ArrayType(Float, 1), bias: Float) -> Float:
    v = s[0] + bias
    return 0.5 * v * (1.0 + math.tanh(0.7978845608 * (v + 0.044715 * v * v * v)))


dense_gelu = fun([ArrayType(ArrayType(Float, I), B), ArrayType(ArrayType(Float, O), I), ArrayType(Float, O)],
                 lambda X, W, b: Map(lambda x: Map(lambda wb: gelu_plus(
                     Reduce(add, 0.0)(Map(mult)(Zip(x, Get(wb, 0)))), Get(wb, 1)))(Zip(Transpose()(W), b)))(X))


def reference(X, W, b):
    v = X.astype(np.float64) @ W + b
    return 0.5 * v * (1 + np.tanh(0.7978845608 * (v + 0.044715 * v ** 3)))


def inputs(kernel, sizes, rng):
    """Uniform random inputs in [-1, 1), weights scaled by 1/sqrt(I) and biases in [-0.1, 0.1)."""
    i = sizes["I"]
    return [rng.uniform(-1, 1, (sizes["B"], i)).astype(np.float32),
            (rng.uniform(-1, 1, (i, sizes["O"])) / math.sqrt(i)).astype(np.float32),
            rng.uniform(-0.1, 0.1, sizes["O"]).astype(np.float32)]
