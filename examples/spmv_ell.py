"""Sparse matrix times vector in ELL format as a new user writes it: every row holds K values and their column
indices (padding entries have value 0), and a user function gathers x at those columns."""

import numpy as np

from lift import ArrayType, Float, Int, Map, SizeVar, Zip, Get, fun, userfun

N = SizeVar("N")
M = SizeVar("M")
SIZES = {"N": 100_003, "M": 99_991}
K = 7


@userfun
def row_dot(vals: ArrayType(Float, K), cols: ArrayType(Int, K), x: ArrayType(Float, M)) -> Float:
    s = 0.0
    for k in range(K):
        s += vals[k] * x[cols[k]]
    return s


spmv_ell = fun([ArrayType(ArrayType(Float, K), N), ArrayType(ArrayType(Int, K), N), ArrayType(Float, M)],
               lambda vals, cols, x: Map(lambda r: row_dot(Get(r, 0), Get(r, 1), x))(Zip(vals, cols)))


def inputs(kernel, sizes, rng):
    n, m = sizes["N"], sizes["M"]
    vals = rng.uniform(-1, 1, (n, K)).astype(np.float32)
    vals[rng.uniform(0, 1, (n, K)) < 0.2] = 0.0
    cols = rng.integers(0, m, (n, K)).astype(np.int32)
    return [vals, cols, rng.uniform(-1, 1, m).astype(np.float32)]


def reference(vals, cols, x):
    return (vals * x[cols]).sum(axis=1)
