"""Jacobi stencils as a new user writes them (Hagedorn et al., CGO 2018): at every point of the padded grid
(`pad` clamps at the boundary), the sum of its neighbourhood (`slide`) weighted by `k`; nothing lowered.
`examples/stencils.py` has hand-lowered forms."""

import numpy as np

from lift import ArrayType, Float, Join, Map, Pad, Reduce, SizeVar, Slide, Transpose, Zip, fun

from blas import add, mult

L = SizeVar("L")
N = SizeVar("N")
M = SizeVar("M")
SIZES = {"L": 1 << 22, "N": 2048, "M": 2048}


def weighted_sum(k):
    """The sum of a window's values times the weights `k`."""
    return lambda w: Reduce(add, 0.0)(Map(mult)(Zip(w, k)))


jacobi1d = fun([ArrayType(Float, L), ArrayType(Float, 3)], lambda a, k: Join()(
    Map(weighted_sum(k))(Slide(3, 1)(Pad(1, 1, "clamp")(a)))))

jacobi2d = fun([ArrayType(ArrayType(Float, N), M), ArrayType(ArrayType(Float, 3), 3)], lambda a, k: Map(Join())(
    Map(Map(lambda nb: weighted_sum(Join()(k))(Join()(nb))))(
        Map(Transpose())(Slide(3, 1)(Map(Slide(3, 1))(Pad(1, 1, "clamp")(Map(Pad(1, 1, "clamp"))(a))))))))


def inputs(kernel, sizes, rng):
    """A random grid and the Jacobi weights: (1, 2, 1) / 4 in 1-D, the 5-point cross / 5 in 2-D."""
    if kernel == "jacobi1d":
        return [rng.uniform(-1, 1, sizes["L"]).astype(np.float32), np.array([0.25, 0.5, 0.25], np.float32)]
    cross = np.array([[0, 1, 0], [1, 1, 1], [0, 1, 0]], np.float32) / 5
    return [rng.uniform(-1, 1, (sizes["M"], sizes["N"])).astype(np.float32), cross]
