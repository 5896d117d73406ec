"""A 3x3 bilateral filter of an image as a new user writes it: each neighbour weighted by a spatial Gaussian and by
exp(-(p - c)² / (2σ²)) of its difference to the centre (a weight that depends on the data), the weighted mean.
Edges clamped."""

import math

import numpy as np

from lift import ArrayType, Float, Map, Pad, SizeVar, Slide, Transpose, fun, userfun

M = SizeVar("M")
N = SizeVar("N")
SIZES = {"M": 1001, "N": 999}
SIGMA_SPACE = 1.0
SIGMA_RANGE = 0.2


@userfun
def bilateral_pixel(w: ArrayType(ArrayType(Float, 3), 3)) -> Float:
    c = w[1][1]
    total = 0.0
    norm = 0.0
    for i in range(3):
        for j in range(3):
            d = w[i][j] - c
            s = math.exp(-((i - 1) * (i - 1) + (j - 1) * (j - 1)) / (2.0 * SIGMA_SPACE * SIGMA_SPACE)
                         - d * d / (2.0 * SIGMA_RANGE * SIGMA_RANGE))
            total += s * w[i][j]
            norm += s
    return total / norm


def windows(a):
    return Map(Transpose())(Slide(3, 1)(Map(Slide(3, 1))(Pad(1, 1, "clamp")(Map(Pad(1, 1, "clamp"))(a)))))


bilateral = fun([ArrayType(ArrayType(Float, N), M)], lambda a: Map(Map(bilateral_pixel))(windows(a)))


def reference(a):
    """The same weights over the edge-padded image, in float64."""
    p = np.pad(a.astype(np.float64), 1, mode="edge")
    total = np.zeros(a.shape)
    norm = np.zeros(a.shape)
    for i in range(3):
        for j in range(3):
            v = p[i:i + a.shape[0], j:j + a.shape[1]]
            s = np.exp(-((i - 1) ** 2 + (j - 1) ** 2) / (2 * SIGMA_SPACE ** 2) - (v - a) ** 2 / (2 * SIGMA_RANGE ** 2))
            total += s * v
            norm += s
    return total / norm
