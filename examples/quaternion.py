"""The Hamilton product of two arrays of quaternions, stored as float4 (w, x, y, z), as a new user writes it."""

import numpy as np

from lift import ArrayType, Float, Get, Map, SizeVar, VectorType, Zip, fun, userfun

N = SizeVar("N")
SIZES = {"N": 1000003}
Quat = VectorType(Float, 4)


@userfun
def qmul(a: VectorType(Float, 4), b: VectorType(Float, 4)) -> VectorType(Float, 4):
    return VectorType(Float, 4)(a.x * b.x - a.y * b.y - a.z * b.z - a.w * b.w,
                                 a.x * b.y + a.y * b.x + a.z * b.w - a.w * b.z,
                                 a.x * b.z - a.y * b.w + a.z * b.x + a.w * b.y,
                                 a.x * b.w + a.y * b.z - a.z * b.y + a.w * b.x)


quaternion = fun([ArrayType(Quat, N), ArrayType(Quat, N)], lambda a, b: Map(
    lambda p: qmul(Get(p, 0), Get(p, 1)))(Zip(a, b)))


def reference(a, b):
    w1, x1, y1, z1 = a.T
    w2, x2, y2, z2 = b.T
    return np.stack([w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2, w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
                     w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2, w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2], axis=1)


def inputs(kernel, sizes, rng):
    """Components in [-1, 1), one quaternion a row of 4 floats."""
    return [rng.uniform(-1, 1, (sizes["N"], 4)).astype(np.float32) for _ in range(2)]
