"""A 3-D 27-point box filter (the mean of each 3x3x3 neighbourhood, clamped at the edges)."""

import numpy as np

from lift import ArrayType, Float, Join, Map, Pad, Reduce, SizeVar, Slide, Transpose, fun

from blas import add

N = SizeVar("N")
M = SizeVar("M")
O = SizeVar("O")
SIZES = {"O": 61, "M": 59, "N": 53}


def pad3(a):
    return Pad(1, 1, "clamp")(Map(Pad(1, 1, "clamp"))(Map(Map(Pad(1, 1, "clamp")))(a)))


def slide3(a):
    s = Slide(3, 1)(Map(Slide(3, 1))(Map(Map(Slide(3, 1)))(a)))
    # [o][3][m][3][n][3] -> [o][m][n][3][3][3]
    return Map(lambda x: Map(Transpose() @ Map(Transpose()))(Transpose()(x)))(s)


box3d = fun([ArrayType(ArrayType(ArrayType(Float, N), M), O)], lambda a: Map(Map(Map(
    lambda nb: Map(lambda s: s * (1.0 / 27.0))(Reduce(add, 0.0)(Join()(Join()(nb)))))))(slide3(pad3(a))))


def reference(a):
    p = np.pad(a, 1, mode="edge")
    o, m, n = a.shape
    out = np.zeros(a.shape)
    for i in range(3):
        for j in range(3):
            for k in range(3):
                out += p[i:i + o, j:j + m, k:k + n]
    return out / 27


def inputs(kernel, sizes, rng):
    """Uniform random values in [-1, 1)."""
    return [rng.uniform(-1, 1, (sizes["O"], sizes["M"], sizes["N"])).astype(np.float32)]
