"""A polynomial evaluated at every point by Horner's rule, a fold over the coefficients (highest first)."""

import numpy as np

from lift import ArrayType, Float, Map, ReduceSeq, SizeVar, fun, userfun

N = SizeVar("N")
D = SizeVar("D")
SIZES = {"N": 100003, "D": 13}


@userfun
def horner_step(acc: Float, c: Float, x: Float) -> Float:
    return acc * x + c


horner = fun([ArrayType(Float, N), ArrayType(Float, D)], lambda xs, cs: Map(
    lambda x: ReduceSeq(lambda acc, c: horner_step(acc, c, x), 0.0)(cs))(xs))


def inputs(kernel, sizes, rng):
    """Uniform random values in [-1, 1)."""
    return [rng.uniform(-1, 1, sizes["N"]).astype(np.float32), rng.uniform(-1, 1, sizes["D"]).astype(np.float32)]


def reference(xs, cs):
    return np.polyval(cs, xs)
