"""A weighted 27-point 3-D stencil as a new user writes it: clamp at the faces, slide 3x3x3 windows, each window's
27 values times 27 weights, summed."""

import numpy as np

from lift import ArrayType, Float, Join, Map, Reduce, SizeVar, Zip, fun

from blas import add, mult
from box3d import pad3, slide3  # the clamped 3x3x3 neighbourhoods of every point

N = SizeVar("N")
M = SizeVar("M")
O = SizeVar("O")
SIZES = {"O": 192, "M": 192, "N": 192}


box27 = fun([ArrayType(ArrayType(ArrayType(Float, N), M), O), ArrayType(ArrayType(ArrayType(Float, 3), 3), 3)],
            lambda a, w: Map(Map(Map(lambda nb: Reduce(add, 0.0)(Map(mult)(Zip(
                Join()(Join()(nb)), Join()(Join()(w))))))))(slide3(pad3(a))))


def reference(a, w):
    p = np.pad(a, 1, mode="edge")
    o, m, n = a.shape
    out = np.zeros(a.shape, np.float32)
    for i in range(3):
        for j in range(3):
            for k in range(3):
                out += w[i, j, k] * p[i:i + o, j:j + m, k:k + n]
    return out


def inputs(kernel, sizes, rng):
    """Uniform random values in [-1, 1), weights in [0, 1)."""
    return [rng.uniform(-1, 1, (sizes["O"], sizes["M"], sizes["N"])).astype(np.float32),
            rng.uniform(0, 1, (3, 3, 3)).astype(np.float32)]
