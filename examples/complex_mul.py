"""Element-wise product of two complex arrays stored interleaved (re, im, re, im, ...)."""

import numpy as np

from lift import ArrayType, Float, Get, Map, SizeVar, Split, Zip, fun, userfun

N = SizeVar("N")
SIZES = {"N": 100003}


@userfun
def cmul(a: ArrayType(Float, 2), b: ArrayType(Float, 2)) -> (Float, Float):
    return (a[0] * b[0] - a[1] * b[1], a[0] * b[1] + a[1] * b[0])


complex_mul = fun([ArrayType(Float, 2 * N), ArrayType(Float, 2 * N)], lambda a, b: Map(
    lambda p: cmul(Get(p, 0), Get(p, 1)))(Zip(Split(2)(a), Split(2)(b))))


def reference(a, b):
    z = (a[0::2] + 1j * a[1::2]) * (b[0::2] + 1j * b[1::2])
    return np.stack([z.real, z.imag], axis=1)


def inputs(kernel, sizes, rng):
    """Uniform random values in [-1, 1)."""
    return [rng.uniform(-1, 1, 2 * sizes["N"]).astype(np.float32) for _ in range(2)]
