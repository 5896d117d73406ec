"""Normalisation `x / sum(x)` as a new user writes it: a reduction whose scalar a map over `x` reads."""

from lift import ArrayType, Float, Map, Reduce, SizeVar, fun, userfun

from blas import add

N = SizeVar("N")
SIZES = {"N": 1 << 22}


@userfun
def divide_by(x: Float, total: ArrayType(Float, 1)) -> Float:
    return x / total[0]


normalise = fun([ArrayType(Float, N)], lambda x: Map(lambda v: divide_by(v, Reduce(add, 0.0)(x)))(x))


def inputs(kernel, sizes, rng):
    """Positive values, so that the sum is far from zero."""
    import numpy as np

    return [rng.uniform(0.5, 1.5, sizes["N"]).astype(np.float32)]
