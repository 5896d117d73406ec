"""Mandelbrot: for each point `c` of a grid, how many of `ITERATIONS` steps of `z ← z² + c` (from `z = 0`) keep
`|z| <= 2`: a map over the points of a user function that loops a fixed number of times.

The computation is chaotic near the set's boundary: one rounding more or less changes a point's count. An
OpenCL compiler may contract `a*b + c` into a fused multiply-add (rounded once), which the reference
interpreter (numpy) never does, so compare with `lift explore --fp-contract off` (the generated code then
starts with `#pragma OPENCL FP_CONTRACT OFF`) for results equal to the interpreter's.
"""

import numpy as np

from lift import ArrayType, Float, Map, SizeVar, Zip, fun, userfun

N = SizeVar("N")
SIZES = {"N": 1 << 16}
ITERATIONS = 64


@userfun
def escape_count(cr: Float, ci: Float) -> Float:
    """How many of `ITERATIONS` steps of `z ← z² + c`, from `z = 0`, keep `|z| <= 2`."""
    re = 0.0
    im = 0.0
    count = 0.0
    for _ in range(ITERATIONS):
        re2 = re * re
        im2 = im * im
        if re2 + im2 <= 4.0:
            im = 2.0 * re * im + ci
            re = re2 - im2 + cr
            count = count + 1.0
    return count


mandelbrot = fun([ArrayType(Float, N), ArrayType(Float, N)], lambda re, im: Map(escape_count)(Zip(re, im)))


def inputs(kernel, sizes, rng):
    """The points of a square grid over [-2, 0.5] x [-1.25, 1.25] (row after row), padded with the origin."""
    n = sizes["N"]
    side = int(np.sqrt(n))
    re, im = np.meshgrid(np.linspace(-2.0, 0.5, side), np.linspace(-1.25, 1.25, side))
    points = np.zeros((2, n), np.float32)
    points[0, :side * side], points[1, :side * side] = re.ravel(), im.ravel()
    return [points[0], points[1]]
