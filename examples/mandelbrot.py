"""Mandelbrot: for each point `c` of a grid, how many of `ITERATIONS` steps of `z ← z² + c` (from `z = 0`) keep
`|z| <= 2`. A map over the points; the fixed iteration count is unrolled where the program is built (a Python
loop composing `escape_step`), since user functions have no loops.

The computation is chaotic near the set's boundary: one rounding more or less changes a point's count. An
OpenCL compiler may contract `a*b + c` into a fused multiply-add (rounded once), which the reference
interpreter (numpy) never does, so compare with `lift explore --fp-contract off` (the generated code then
starts with `#pragma OPENCL FP_CONTRACT OFF`) for results equal to the interpreter's.
"""

import numpy as np

from lift import ArrayType, Float, Map, SizeVar, VectorType, Vectorize, Zip, fun, userfun

N = SizeVar("N")
SIZES = {"N": 1 << 16}
ITERATIONS = 64
Float4 = VectorType(Float, 4)


@userfun
def escape_step(z: Float4, cr: Float, ci: Float) -> Float4:
    """One step from the state `z = (re, im, count, 0)`: while `|z| <= 2`, `z ← z² + c` and the count grows."""
    re2 = z.x * z.x
    im2 = z.y * z.y
    inside = re2 + im2 <= 4.0
    return Float4(re2 - im2 + cr, 2.0 * z.x * z.y + ci, z.z + 1.0, 0.0) if inside else z


@userfun
def escape_count(z: Float4) -> Float:
    return z.z


def _escape_count(cr, ci):
    z = Vectorize(4, 0.0)
    for _ in range(ITERATIONS):
        z = escape_step(z, cr, ci)
    return escape_count(z)


mandelbrot = fun([ArrayType(Float, N), ArrayType(Float, N)], lambda re, im: Map(_escape_count)(Zip(re, im)))


def inputs(kernel, sizes, rng):
    """The points of a square grid over [-2, 0.5] x [-1.25, 1.25] (row after row), padded with the origin."""
    n = sizes["N"]
    side = int(np.sqrt(n))
    re, im = np.meshgrid(np.linspace(-2.0, 0.5, side), np.linspace(-1.25, 1.25, side))
    points = np.zeros((2, n), np.float32)
    points[0, :side * side], points[1, :side * side] = re.ravel(), im.ravel()
    return [points[0], points[1]]
