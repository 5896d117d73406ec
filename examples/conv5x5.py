"""A 5x5 weighted convolution of an image as a new user writes it: clamp at the edges, slide 5x5 windows."""

import numpy as np

from lift import ArrayType, Float, Join, Map, Pad, Reduce, SizeVar, Slide, Transpose, Zip, fun

from blas import add, mult

N = SizeVar("N")
M = SizeVar("M")
SIZES = {"M": 1001, "N": 999}


def windows(a):
    return Map(Transpose())(Slide(5, 1)(Map(Slide(5, 1))(Pad(2, 2, "clamp")(Map(Pad(2, 2, "clamp"))(a)))))


conv5x5 = fun([ArrayType(ArrayType(Float, N), M), ArrayType(ArrayType(Float, 5), 5)], lambda a, k: Map(Map(
    lambda w: Reduce(add, 0.0)(Map(mult)(Zip(Join()(w), Join()(k))))))(windows(a)))


def reference(a, k):
    p = np.pad(a, 2, mode="edge")
    out = np.zeros(a.shape)
    for i in range(5):
        for j in range(5):
            out += k[i, j] * p[i:i + a.shape[0], j:j + a.shape[1]]
    return out


def inputs(kernel, sizes, rng):
    """Uniform random values in [-1, 1)."""
    return [rng.uniform(-1, 1, shape).astype(np.float32) for shape in ((sizes["M"], sizes["N"]), (5, 5))]
