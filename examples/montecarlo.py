"""Monte-Carlo estimation of pi as a new user writes it: each index hashed by xorshift to a point of the unit square,
the points inside the quarter circle counted."""

import numpy as np

from lift import ArrayType, Int, Map, Reduce, SizeVar, fun, userfun

N = SizeVar("N")
SIZES = {"N": 16_777_213}


@userfun
def inside(i: Int) -> Int:
    s = i * 1103515245 + 12345
    s ^= s << 13
    s ^= s >> 17
    s ^= s << 5
    x = float(s & 65535) / 65536.0
    s ^= s << 13
    s ^= s >> 17
    s ^= s << 5
    y = float(s & 65535) / 65536.0
    return 1 if x * x + y * y < 1.0 else 0


@userfun
def addi(a: Int, b: Int) -> Int:
    return a + b


montecarlo = fun([ArrayType(Int, N)], lambda idx: Reduce(addi, 0)(Map(inside)(idx)))


def inputs(kernel, sizes, rng):
    return [np.arange(sizes["N"], dtype=np.int32)]


def reference(idx):
    with np.errstate(over="ignore"):
        s = idx * np.int32(1103515245) + np.int32(12345)
        s ^= s << 13
        s ^= s >> 17
        s ^= s << 5
        x = (s & 65535).astype(np.float32) / np.float32(65536.0)
        s ^= s << 13
        s ^= s >> 17
        s ^= s << 5
        y = (s & 65535).astype(np.float32) / np.float32(65536.0)
    return np.array([np.count_nonzero(x * x + y * y < 1.0)], np.int32)
