"""PolyBench's heat-3d as a new user writes it: `T` explicit steps of the 3-D heat equation, each point
moved by 0.125 times the second difference along each axis (the grid clamped at its faces)."""

import numpy as np

from lift import ArrayType, Float, Iterate, Map, Pad, SizeVar, Slide, Transpose, fun, userfun

N = SizeVar("N")
M = SizeVar("M")
O = SizeVar("O")
SIZES = {"O": 61, "M": 59, "N": 53}
T = 10


@userfun
def heat(w: ArrayType(ArrayType(ArrayType(Float, 3), 3), 3)) -> Float:
    c = w[1][1][1]
    return (c + 0.125 * (w[2][1][1] - 2.0 * c + w[0][1][1]) + 0.125 * (w[1][2][1] - 2.0 * c + w[1][0][1])
            + 0.125 * (w[1][1][2] - 2.0 * c + w[1][1][0]))


def pad3(a):
    return Pad(1, 1, "clamp")(Map(Pad(1, 1, "clamp"))(Map(Map(Pad(1, 1, "clamp")))(a)))


def slide3(a):
    """The 3x3x3 neighbourhood of every point: [o][m][n][3][3][3]."""
    s = Slide(3, 1)(Map(Slide(3, 1))(Map(Map(Slide(3, 1)))(a)))
    return Map(lambda x: Map(Transpose() @ Map(Transpose()))(Transpose()(x)))(s)


def step(a):
    return Map(Map(Map(heat)))(slide3(pad3(a)))


heat3d = fun([ArrayType(ArrayType(ArrayType(Float, N), M), O)], lambda a: Iterate(T, step)(a))


def reference(a):
    for _ in range(T):
        p = np.pad(a, 1, mode="edge")
        c = p[1:-1, 1:-1, 1:-1]
        a = (c + 0.125 * (p[2:, 1:-1, 1:-1] - 2 * c + p[:-2, 1:-1, 1:-1])
             + 0.125 * (p[1:-1, 2:, 1:-1] - 2 * c + p[1:-1, :-2, 1:-1])
             + 0.125 * (p[1:-1, 1:-1, 2:] - 2 * c + p[1:-1, 1:-1, :-2]))
    return a


def inputs(kernel, sizes, rng):
    """Uniform random values in [-1, 1)."""
    return [rng.uniform(-1, 1, (sizes["O"], sizes["M"], sizes["N"])).astype(np.float32)]
