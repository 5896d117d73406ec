"""Sobel edge magnitude sqrt(gx² + gy²) of an image as a new user writes it: clamp at the edges, slide 3x3
windows, and a user function reading the window."""

import math

import numpy as np

from lift import ArrayType, Float, Map, Pad, SizeVar, Slide, Transpose, fun, userfun

M = SizeVar("M")
N = SizeVar("N")
SIZES = {"M": 1001, "N": 999}


@userfun
def sobel_mag(w: ArrayType(ArrayType(Float, 3), 3)) -> Float:
    gx = (w[0][2] + 2.0 * w[1][2] + w[2][2]) - (w[0][0] + 2.0 * w[1][0] + w[2][0])
    gy = (w[2][0] + 2.0 * w[2][1] + w[2][2]) - (w[0][0] + 2.0 * w[0][1] + w[0][2])
    return math.sqrt(gx * gx + gy * gy)


def windows(a):
    return Map(Transpose())(Slide(3, 1)(Map(Slide(3, 1))(Pad(1, 1, "clamp")(Map(Pad(1, 1, "clamp"))(a)))))


sobel = fun([ArrayType(ArrayType(Float, N), M)], lambda a: Map(Map(sobel_mag))(windows(a)))


def reference(a):
    p = np.pad(a, 1, mode="edge")
    s = lambda i, j: p[i:i + a.shape[0], j:j + a.shape[1]]
    gx = (s(0, 2) + 2 * s(1, 2) + s(2, 2)) - (s(0, 0) + 2 * s(1, 0) + s(2, 0))
    gy = (s(2, 0) + 2 * s(2, 1) + s(2, 2)) - (s(0, 0) + 2 * s(0, 1) + s(0, 2))
    return np.sqrt(gx * gx + gy * gy)
