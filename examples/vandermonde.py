"""The Vandermonde matrix of a polynomial fit as a new user writes it: V[i, j] = x_i ** j, each power by a loop of
j multiplications in a user function (the exponents an Int array 0, 1, ..., D - 1)."""

import numpy as np

from lift import ArrayType, Float, Int, Map, SizeVar, fun, userfun

N = SizeVar("N")
D = SizeVar("D")
SIZES = {"N": 100003, "D": 9}


@userfun
def power(x: Float, k: Int) -> Float:
    r = 1.0
    for i in range(k):
        r *= x
    return r


vandermonde = fun([ArrayType(Float, N), ArrayType(Int, D)], lambda xs, ks: Map(
    lambda x: Map(lambda k: power(x, k))(ks))(xs))


def reference(xs, ks):
    return np.vander(xs, len(ks), increasing=True)


def inputs(kernel, sizes, rng):
    """Points in [-1, 1), the exponents 0 .. D - 1."""
    return [rng.uniform(-1, 1, sizes["N"]).astype(np.float32), np.arange(sizes["D"], dtype=np.int32)]
