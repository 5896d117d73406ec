"""One step of Conway's game of life on a torus as a new user writes it: Int cells, wrap at the edges, slide 3x3
windows, and the rule in a user function."""

import numpy as np

from lift import ArrayType, Int, Map, Pad, SizeVar, Slide, Transpose, fun, userfun

M = SizeVar("M")
N = SizeVar("N")
SIZES = {"M": 1001, "N": 999}


@userfun
def rule(w: ArrayType(ArrayType(Int, 3), 3)) -> Int:
    n = 0
    for i in range(3):
        for j in range(3):
            n += w[i][j]
    n -= w[1][1]
    if n == 3 or (n == 2 and w[1][1] == 1):
        return 1
    return 0


def windows(a):
    return Map(Transpose())(Slide(3, 1)(Map(Slide(3, 1))(Pad(1, 1, "wrap")(Map(Pad(1, 1, "wrap"))(a)))))


life = fun([ArrayType(ArrayType(Int, N), M)], lambda a: Map(Map(rule))(windows(a)))


def inputs(kernel, sizes, rng):
    return [(rng.uniform(0, 1, (sizes["M"], sizes["N"])) < 0.3).astype(np.int32)]


def reference(a):
    n = sum(np.roll(np.roll(a, i, 0), j, 1) for i in (-1, 0, 1) for j in (-1, 0, 1)) - a
    return ((n == 3) | ((n == 2) & (a == 1))).astype(np.int32)
