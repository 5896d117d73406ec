"""PolyBench's jacobi-1d as a new user writes it: `T` steps of the 3-point average (clamped at the ends)."""

import numpy as np

from lift import ArrayType, Float, Iterate, Map, Pad, SizeVar, Slide, fun, userfun

N = SizeVar("N")
SIZES = {"N": 1000003}
T = 20


@userfun
def avg3(w: ArrayType(Float, 3)) -> Float:
    return 0.33333 * (w[0] + w[1] + w[2])


jacobi1d_steps = fun([ArrayType(Float, N)], lambda a: Iterate(T, lambda b: Map(avg3)(Slide(3, 1)(Pad(1, 1, "clamp")(b))))(a))


def reference(a):
    for _ in range(T):
        p = np.pad(a, 1, mode="edge")
        a = 0.33333 * (p[:-2] + p[1:-1] + p[2:])
    return a


def inputs(kernel, sizes, rng):
    """Uniform random values in [-1, 1)."""
    return [rng.uniform(-1, 1, sizes["N"]).astype(np.float32)]
