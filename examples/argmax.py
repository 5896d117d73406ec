"""The largest value of an array and its index: a reduction of (value, index) pairs."""

import numpy as np

from lift import ArrayType, Float, Int, Reduce, SizeVar, Zip, fun, userfun

N = SizeVar("N")
SIZES = {"N": 100003}


@userfun(associative=True)
def better(a: (Float, Int), b: (Float, Int)) -> (Float, Int):
    if a[0] > b[0] or (a[0] == b[0] and a[1] < b[1]):
        return (a[0], a[1])
    return (b[0], b[1])


argmax = fun([ArrayType(Float, N), ArrayType(Int, N)], lambda x, i: Reduce(better, (-np.inf, -1))(Zip(x, i)))


def inputs(kernel, sizes, rng):
    """Normal random values and their indices."""
    return [rng.standard_normal(sizes["N"]).astype(np.float32), np.arange(sizes["N"], dtype=np.int32)]


def reference(x, i):
    k = int(np.argmax(x))
    return np.array([x[k], k])
