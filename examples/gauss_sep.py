"""A separable 5-tap Gaussian blur as a new user writes it: a pass along the rows, then one along the columns
(the same pass on the transposed image, transposed back), edges clamped."""

import numpy as np

from lift import ArrayType, Float, Join, Map, Pad, Reduce, SizeVar, Slide, Transpose, Zip, fun

from blas import add, mult

M = SizeVar("M")
N = SizeVar("N")
SIZES = {"M": 1001, "N": 999}


def row_pass(a, k):
    return Map(lambda row: Join()(Map(lambda w: Reduce(add, 0.0)(Map(mult)(Zip(w, k))))(
        Slide(5, 1)(Pad(2, 2, "clamp")(row)))))(a)


def blur(a, k):
    return Transpose()(row_pass(Transpose()(row_pass(a, k)), k))


gauss_sep = fun([ArrayType(ArrayType(Float, N), M), ArrayType(Float, 5)], blur)


def inputs(kernel, sizes, rng):
    k = np.array([1, 4, 6, 4, 1], np.float32) / 16
    return [rng.uniform(-1, 1, (sizes["M"], sizes["N"])).astype(np.float32), k]


def reference(a, k):
    p = np.pad(a, ((0, 0), (2, 2)), mode="edge")
    r = sum(k[i] * p[:, i:i + a.shape[1]] for i in range(5))
    p = np.pad(r, ((2, 2), (0, 0)), mode="edge")
    return sum(k[i] * p[i:i + a.shape[0], :] for i in range(5))
