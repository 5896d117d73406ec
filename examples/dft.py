"""The naive discrete Fourier transform of a real signal as a new user writes it, O(N²): for every frequency k the
sum over n of x_n (cos, -sin)(2π k n / N), a reduction of (real, imaginary) pairs. The user function takes k n
modulo N first, so that the angle stays in [0, 2π) in single precision."""

import math

import numpy as np

from lift import ArrayType, Float, Get, Int, Map, Reduce, SizeVar, Zip, fun, userfun

N = SizeVar("N")
SIZES = {"N": 4099}


@userfun
def twiddle(k: Int, n: Int, x: Float, count: Int) -> (Float, Float):
    a = (2.0 * math.pi / count) * ((k * n) % count)
    return (x * math.cos(a), -x * math.sin(a))


@userfun(associative=True)
def add_complex(a: (Float, Float), b: (Float, Float)) -> (Float, Float):
    return (a[0] + b[0], a[1] + b[1])


dft = fun([ArrayType(Float, N), ArrayType(Int, N), Int], lambda x, idx, count: Map(
    lambda k: Reduce(add_complex, (0.0, 0.0))(Map(lambda p: twiddle(k, Get(p, 0), Get(p, 1), count))(Zip(idx, x))))(idx))


def reference(x, idx, count):
    """numpy's FFT (float64): real and imaginary parts."""
    f = np.fft.fft(x.astype(np.float64))
    return np.stack([f.real, f.imag], axis=-1)


def inputs(kernel, sizes, rng):
    """A uniform random signal in [-1, 1), the indices 0 .. N - 1 and N."""
    n = sizes["N"]
    return [rng.uniform(-1, 1, n).astype(np.float32), np.arange(n, dtype=np.int32), np.int32(n)]
