"""One time step of PolyBench's fdtd-2d as a new user writes it: three fields, ey and ex updated from hz, then hz
from the new ex and ey; neighbours past an edge are clamped (the differences there are 0)."""

import numpy as np

from lift import ArrayType, Float, Get, Map, Pad, SizeVar, Slide, Transpose, Tuple, Zip, fun, userfun

X = SizeVar("X")
Y = SizeVar("Y")
SIZES = {"X": 1001, "Y": 999}


@userfun
def update_e(e: Float, h: ArrayType(Float, 2)) -> Float:
    return e - 0.5 * (h[1] - h[0])


@userfun
def update_h(h: Float, ex: ArrayType(Float, 2), ey: ArrayType(Float, 2)) -> Float:
    return h - 0.7 * (ex[1] - ex[0] + ey[1] - ey[0])


def step(ex, ey, hz):
    ey1 = Map(lambda p: Map(lambda q: update_e(Get(q, 0), Get(q, 1)))(Zip(Get(p, 0), Transpose()(Get(p, 1)))))(
        Zip(ey, Slide(2, 1)(Pad(1, 0, "clamp")(hz))))
    ex1 = Map(lambda p: Map(lambda q: update_e(Get(q, 0), Get(q, 1)))(
        Zip(Get(p, 0), Slide(2, 1)(Pad(1, 0, "clamp")(Get(p, 1))))))(Zip(ex, hz))
    hz1 = Map(lambda p: Map(lambda q: update_h(Get(q, 0), Get(q, 1), Get(q, 2)))(
        Zip(Get(p, 0), Slide(2, 1)(Pad(0, 1, "clamp")(Get(p, 1))), Transpose()(Get(p, 2)))))(
        Zip(hz, ex1, Slide(2, 1)(Pad(0, 1, "clamp")(ey1))))
    return Tuple(ex1, ey1, hz1)


Field = ArrayType(ArrayType(Float, Y), X)
fdtd2d = fun([Field, Field, Field], step)


def reference(ex, ey, hz):
    ey1 = ey - 0.5 * (hz - np.concatenate([hz[:1], hz[:-1]], axis=0))
    ex1 = ex - 0.5 * (hz - np.concatenate([hz[:, :1], hz[:, :-1]], axis=1))
    dx = np.concatenate([ex1[:, 1:], ex1[:, -1:]], axis=1) - ex1
    dy = np.concatenate([ey1[1:], ey1[-1:]], axis=0) - ey1
    return ex1, ey1, hz - 0.7 * (dx + dy)


def inputs(kernel, sizes, rng):
    """Uniform random fields in [-1, 1)."""
    return [rng.uniform(-1, 1, (sizes["X"], sizes["Y"])).astype(np.float32) for _ in range(3)]
