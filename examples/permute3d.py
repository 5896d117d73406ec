"""A 3-D tensor's axes permuted as a new user writes it: y[k, i, j] = x[i, j, k], two transposes."""

import numpy as np

from lift import ArrayType, Float, Map, SizeVar, Transpose, fun

I = SizeVar("I")
J = SizeVar("J")
K = SizeVar("K")
SIZES = {"I": 256, "J": 128, "K": 96}

permute3d = fun([ArrayType(ArrayType(ArrayType(Float, K), J), I)], lambda x: Transpose()(Map(Transpose())(x)))


def reference(x):
    return np.ascontiguousarray(x.transpose(2, 0, 1))
