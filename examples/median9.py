"""A 3x3 median filter as a new user writes it: clamped 3x3 windows, the median of each by a min/max network of 19
exchanges (Paeth's) in a user function."""

import numpy as np

from lift import ArrayType, Float, Map, Pad, SizeVar, Slide, Transpose, fun, userfun

M = SizeVar("M")
N = SizeVar("N")
SIZES = {"M": 1001, "N": 999}


@userfun
def median(w: ArrayType(ArrayType(Float, 3), 3)) -> Float:
    p0 = w[0][0]
    p1 = w[0][1]
    p2 = w[0][2]
    p3 = w[1][0]
    p4 = w[1][1]
    p5 = w[1][2]
    p6 = w[2][0]
    p7 = w[2][1]
    p8 = w[2][2]
    t = min(p1, p2)
    p2 = max(p1, p2)
    p1 = t
    t = min(p4, p5)
    p5 = max(p4, p5)
    p4 = t
    t = min(p7, p8)
    p8 = max(p7, p8)
    p7 = t
    t = min(p0, p1)
    p1 = max(p0, p1)
    p0 = t
    t = min(p3, p4)
    p4 = max(p3, p4)
    p3 = t
    t = min(p6, p7)
    p7 = max(p6, p7)
    p6 = t
    t = min(p1, p2)
    p2 = max(p1, p2)
    p1 = t
    t = min(p4, p5)
    p5 = max(p4, p5)
    p4 = t
    t = min(p7, p8)
    p8 = max(p7, p8)
    p7 = t
    p3 = max(p0, p3)
    p5 = min(p5, p8)
    t = min(p4, p7)
    p7 = max(p4, p7)
    p4 = t
    p6 = max(p3, p6)
    p4 = max(p1, p4)
    p2 = min(p2, p5)
    p4 = min(p4, p7)
    t = min(p4, p2)
    p2 = max(p4, p2)
    p4 = t
    p4 = max(p6, p4)
    return min(p4, p2)


def windows(a):
    return Map(Transpose())(Slide(3, 1)(Map(Slide(3, 1))(Pad(1, 1, "clamp")(Map(Pad(1, 1, "clamp"))(a)))))


median9 = fun([ArrayType(ArrayType(Float, N), M)], lambda a: Map(Map(median))(windows(a)))


def reference(a):
    p = np.pad(a, 1, mode="edge")
    m, n = a.shape
    return np.median(np.stack([p[i:i + m, j:j + n] for i in range(3) for j in range(3)]), axis=0)
